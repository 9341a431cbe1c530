
use builtin;
use str;

set edit:completion:arg-completer[discuss] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'discuss'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'discuss'= {
            cand --ledger 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]'
            cand --actor 'Recorded as `by` on every record written [default: the OS user name]'
            cand --color 'When to colour output (never with --json; NO_COLOR turns auto off)'
            cand --json 'Print exactly one JSON object on stdout (errors: one on stderr)'
            cand --allow-network-fs 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand fleet 'Register agents in fleets, remove them, list fleets'
            cand ask 'Start a discussion: the root message from one agent to its peer'
            cand wake 'Reserve one budgeted turn for the recipient of the head'
            cand reply 'Answer within a reserved turn (a question or a result)'
            cand show 'Show the derived state of a discussion'
            cand kill-switch 'Engage, release or read the global kill-switch'
            cand quota 'Set or show hourly wake quotas'
            cand call 'Take one of the seed''s request objects (ask_peer, wake_agent, reply_discussion, get_discussion) and answer JSON'
            cand list 'List discussions, newest first'
            cand inbox 'Open discussions whose head is addressed to an agent (reads only)'
            cand verify 'Replay the whole ledger and report problems (exit 7 when any)'
            cand wait 'Wait until a discussion reaches a status (exit 10 on timeout)'
            cand events 'The ledger''s records in order with each one''s discussion status; --follow keeps watching (reads only)'
            cand ledger 'Export, import or describe the ledger (a file or PostgreSQL)'
            cand mcp 'Serve the tools (ask_peer, wake_agent, reply_discussion, get_discussion, list_discussions, inbox) over MCP on stdio'
            cand completions 'Print a completion script'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'discuss;fleet'= {
            cand --ledger 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]'
            cand --actor 'Recorded as `by` on every record written [default: the OS user name]'
            cand --color 'When to colour output (never with --json; NO_COLOR turns auto off)'
            cand --json 'Print exactly one JSON object on stdout (errors: one on stderr)'
            cand --allow-network-fs 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
            cand add 'Add agents to a fleet (creating it); agents already in it are skipped'
            cand remove 'Remove agents from a fleet; discussions under way are not touched'
            cand list 'List fleets and their members'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'discuss;fleet;add'= {
            cand --ledger 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]'
            cand --actor 'Recorded as `by` on every record written [default: the OS user name]'
            cand --color 'When to colour output (never with --json; NO_COLOR turns auto off)'
            cand --json 'Print exactly one JSON object on stdout (errors: one on stderr)'
            cand --allow-network-fs 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'discuss;fleet;remove'= {
            cand --ledger 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]'
            cand --actor 'Recorded as `by` on every record written [default: the OS user name]'
            cand --color 'When to colour output (never with --json; NO_COLOR turns auto off)'
            cand --json 'Print exactly one JSON object on stdout (errors: one on stderr)'
            cand --allow-network-fs 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'discuss;fleet;list'= {
            cand --ledger 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]'
            cand --actor 'Recorded as `by` on every record written [default: the OS user name]'
            cand --color 'When to colour output (never with --json; NO_COLOR turns auto off)'
            cand --json 'Print exactly one JSON object on stdout (errors: one on stderr)'
            cand --allow-network-fs 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'discuss;fleet;help'= {
            cand add 'Add agents to a fleet (creating it); agents already in it are skipped'
            cand remove 'Remove agents from a fleet; discussions under way are not touched'
            cand list 'List fleets and their members'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'discuss;fleet;help;add'= {
        }
        &'discuss;fleet;help;remove'= {
        }
        &'discuss;fleet;help;list'= {
        }
        &'discuss;fleet;help;help'= {
        }
        &'discuss;ask'= {
            cand --from 'The asking agent'
            cand --to 'The peer (exactly one: group discussions are refused)'
            cand --fleet 'The fleet both agents belong to'
            cand --payload 'The message body as JSON (any JSON value)'
            cand --payload-file 'Read the JSON body from a file, or from stdin with `-`'
            cand --max-turns 'Turn budget, the root included (2 to 32)'
            cand --timeout-ms 'Conversation deadline after the root, in ms (1000 to 900000)'
            cand --turn-timeout-ms 'Deadline of each turn, in ms (1000 to 300000, at most --timeout-ms)'
            cand --idempotency-key 'Makes the write safe to retry: the same key with the same arguments answers the original result ("replayed": true) and writes nothing; with other arguments it is refused (idempotency_conflict)'
            cand --kill-grace-ms 'Grace period between SIGTERM and SIGKILL of a supervised run, in ms'
            cand --env 'With --clean-env: also pass this variable on (repeatable)'
            cand --ledger 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]'
            cand --actor 'Recorded as `by` on every record written [default: the OS user name]'
            cand --color 'When to colour output (never with --json; NO_COLOR turns auto off)'
            cand --wake-peer 'Reserve the peer''s first turn in the same atomic write'
            cand -q 'Print only the ids (the new discussion, the new attempt, or one listed discussion a line), also with --json'
            cand --quiet 'Print only the ids (the new discussion, the new attempt, or one listed discussion a line), also with --json'
            cand --reply-from-stdout 'Capture the command''s stdout; if it exits 0 without replying, post the output as a `result` reply (JSON body when it is JSON, else {"text": ...})'
            cand --close-on-reply 'With --reply-from-stdout: close the discussion with that reply'
            cand --clean-env 'Start the command with only PATH, HOME, LANG, TERM, the DISCUSS_* variables and those named by --env, instead of this whole environment'
            cand --json 'Print exactly one JSON object on stdout (errors: one on stderr)'
            cand --allow-network-fs 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'discuss;wake'= {
            cand --agent 'The agent to wake: the recipient of the head'
            cand --discussion 'The discussion'
            cand --expected-head 'The head message the caller saw; refused as stale_head if it moved'
            cand --idempotency-key 'Makes the write safe to retry: the same key with the same arguments answers the original result ("replayed": true) and writes nothing; with other arguments it is refused (idempotency_conflict)'
            cand --kill-grace-ms 'Grace period between SIGTERM and SIGKILL of a supervised run, in ms'
            cand --env 'With --clean-env: also pass this variable on (repeatable)'
            cand --ledger 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]'
            cand --actor 'Recorded as `by` on every record written [default: the OS user name]'
            cand --color 'When to colour output (never with --json; NO_COLOR turns auto off)'
            cand -q 'Print only the ids (the new discussion, the new attempt, or one listed discussion a line), also with --json'
            cand --quiet 'Print only the ids (the new discussion, the new attempt, or one listed discussion a line), also with --json'
            cand --reply-from-stdout 'Capture the command''s stdout; if it exits 0 without replying, post the output as a `result` reply (JSON body when it is JSON, else {"text": ...})'
            cand --close-on-reply 'With --reply-from-stdout: close the discussion with that reply'
            cand --clean-env 'Start the command with only PATH, HOME, LANG, TERM, the DISCUSS_* variables and those named by --env, instead of this whole environment'
            cand --json 'Print exactly one JSON object on stdout (errors: one on stderr)'
            cand --allow-network-fs 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'discuss;reply'= {
            cand --agent 'The woken agent'
            cand --discussion 'The discussion'
            cand --attempt 'The attempt `wake` reserved'
            cand --reply-to 'The head message being answered'
            cand --type 'A question back to the other agent, or a result'
            cand --payload 'The message body as JSON (any JSON value)'
            cand --payload-file 'Read the JSON body from a file, or from stdin with `-`'
            cand --idempotency-key 'Makes the write safe to retry: the same key with the same arguments answers the original result ("replayed": true) and writes nothing; with other arguments it is refused (idempotency_conflict)'
            cand --ledger 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]'
            cand --actor 'Recorded as `by` on every record written [default: the OS user name]'
            cand --color 'When to colour output (never with --json; NO_COLOR turns auto off)'
            cand --close 'End the discussion with this reply'
            cand --json 'Print exactly one JSON object on stdout (errors: one on stderr)'
            cand --allow-network-fs 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'discuss;show'= {
            cand --format 'Human output as a terminal table, or a Markdown document with every body whole (--json prints the contract''s object)'
            cand --ledger 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]'
            cand --actor 'Recorded as `by` on every record written [default: the OS user name]'
            cand --color 'When to colour output (never with --json; NO_COLOR turns auto off)'
            cand --no-receipts 'Leave out the receipts of each transcript entry'
            cand --json 'Print exactly one JSON object on stdout (errors: one on stderr)'
            cand --allow-network-fs 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'discuss;kill-switch'= {
            cand --ledger 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]'
            cand --actor 'Recorded as `by` on every record written [default: the OS user name]'
            cand --color 'When to colour output (never with --json; NO_COLOR turns auto off)'
            cand --json 'Print exactly one JSON object on stdout (errors: one on stderr)'
            cand --allow-network-fs 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
            cand status 'Show whether the switch is engaged (the default)'
            cand on 'Engage the switch'
            cand off 'Release the switch'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'discuss;kill-switch;status'= {
            cand --ledger 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]'
            cand --actor 'Recorded as `by` on every record written [default: the OS user name]'
            cand --color 'When to colour output (never with --json; NO_COLOR turns auto off)'
            cand --json 'Print exactly one JSON object on stdout (errors: one on stderr)'
            cand --allow-network-fs 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'discuss;kill-switch;on'= {
            cand --reason 'Why; shown to everyone who is refused'
            cand --ledger 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]'
            cand --actor 'Recorded as `by` on every record written [default: the OS user name]'
            cand --color 'When to colour output (never with --json; NO_COLOR turns auto off)'
            cand --json 'Print exactly one JSON object on stdout (errors: one on stderr)'
            cand --allow-network-fs 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'discuss;kill-switch;off'= {
            cand --ledger 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]'
            cand --actor 'Recorded as `by` on every record written [default: the OS user name]'
            cand --color 'When to colour output (never with --json; NO_COLOR turns auto off)'
            cand --json 'Print exactly one JSON object on stdout (errors: one on stderr)'
            cand --allow-network-fs 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'discuss;kill-switch;help'= {
            cand status 'Show whether the switch is engaged (the default)'
            cand on 'Engage the switch'
            cand off 'Release the switch'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'discuss;kill-switch;help;status'= {
        }
        &'discuss;kill-switch;help;on'= {
        }
        &'discuss;kill-switch;help;off'= {
        }
        &'discuss;kill-switch;help;help'= {
        }
        &'discuss;quota'= {
            cand --ledger 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]'
            cand --actor 'Recorded as `by` on every record written [default: the OS user name]'
            cand --color 'When to colour output (never with --json; NO_COLOR turns auto off)'
            cand --json 'Print exactly one JSON object on stdout (errors: one on stderr)'
            cand --allow-network-fs 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
            cand set 'Set the quota of one agent, or the default (30 when never set)'
            cand show 'Show the default, each agent''s quota and its wakes in the last hour'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'discuss;quota;set'= {
            cand --agent 'The agent; without it, the default is set'
            cand --ledger 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]'
            cand --actor 'Recorded as `by` on every record written [default: the OS user name]'
            cand --color 'When to colour output (never with --json; NO_COLOR turns auto off)'
            cand --json 'Print exactly one JSON object on stdout (errors: one on stderr)'
            cand --allow-network-fs 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'discuss;quota;show'= {
            cand --ledger 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]'
            cand --actor 'Recorded as `by` on every record written [default: the OS user name]'
            cand --color 'When to colour output (never with --json; NO_COLOR turns auto off)'
            cand --json 'Print exactly one JSON object on stdout (errors: one on stderr)'
            cand --allow-network-fs 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'discuss;quota;help'= {
            cand set 'Set the quota of one agent, or the default (30 when never set)'
            cand show 'Show the default, each agent''s quota and its wakes in the last hour'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'discuss;quota;help;set'= {
        }
        &'discuss;quota;help;show'= {
        }
        &'discuss;quota;help;help'= {
        }
        &'discuss;call'= {
            cand --ledger 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]'
            cand --actor 'Recorded as `by` on every record written [default: the OS user name]'
            cand --color 'When to colour output (never with --json; NO_COLOR turns auto off)'
            cand --json 'Print exactly one JSON object on stdout (errors: one on stderr)'
            cand --allow-network-fs 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'discuss;list'= {
            cand --status 'Only these statuses (repeatable or comma-separated; `terminal` for closed, deadman, expired, exhausted and invalid)'
            cand --agent 'Only discussions this agent takes part in'
            cand --fleet 'Only discussions of this fleet'
            cand --ledger 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]'
            cand --actor 'Recorded as `by` on every record written [default: the OS user name]'
            cand --color 'When to colour output (never with --json; NO_COLOR turns auto off)'
            cand -q 'Print only the ids (the new discussion, the new attempt, or one listed discussion a line), also with --json'
            cand --quiet 'Print only the ids (the new discussion, the new attempt, or one listed discussion a line), also with --json'
            cand --json 'Print exactly one JSON object on stdout (errors: one on stderr)'
            cand --allow-network-fs 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'discuss;inbox'= {
            cand --agent 'The agent'
            cand --ledger 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]'
            cand --actor 'Recorded as `by` on every record written [default: the OS user name]'
            cand --color 'When to colour output (never with --json; NO_COLOR turns auto off)'
            cand -q 'Print only the ids (the new discussion, the new attempt, or one listed discussion a line), also with --json'
            cand --quiet 'Print only the ids (the new discussion, the new attempt, or one listed discussion a line), also with --json'
            cand --json 'Print exactly one JSON object on stdout (errors: one on stderr)'
            cand --allow-network-fs 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'discuss;verify'= {
            cand --ledger 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]'
            cand --actor 'Recorded as `by` on every record written [default: the OS user name]'
            cand --color 'When to colour output (never with --json; NO_COLOR turns auto off)'
            cand --json 'Print exactly one JSON object on stdout (errors: one on stderr)'
            cand --allow-network-fs 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'discuss;wait'= {
            cand --until 'Statuses to wait for (comma-separated; `terminal` for any terminal one)'
            cand --timeout-ms 'Give up after this many ms (default: wait as long as it takes)'
            cand --ledger 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]'
            cand --actor 'Recorded as `by` on every record written [default: the OS user name]'
            cand --color 'When to colour output (never with --json; NO_COLOR turns auto off)'
            cand --json 'Print exactly one JSON object on stdout (errors: one on stderr)'
            cand --allow-network-fs 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'discuss;events'= {
            cand --discussion 'Only the records of this discussion'
            cand --agent 'Only the records of discussions this agent takes part in'
            cand --ledger 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]'
            cand --actor 'Recorded as `by` on every record written [default: the OS user name]'
            cand --color 'When to colour output (never with --json; NO_COLOR turns auto off)'
            cand --follow 'Keep watching and print records as they are written'
            cand --json 'Print exactly one JSON object on stdout (errors: one on stderr)'
            cand --allow-network-fs 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'discuss;ledger'= {
            cand --ledger 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]'
            cand --actor 'Recorded as `by` on every record written [default: the OS user name]'
            cand --color 'When to colour output (never with --json; NO_COLOR turns auto off)'
            cand --json 'Print exactly one JSON object on stdout (errors: one on stderr)'
            cand --allow-network-fs 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
            cand export 'Write the ledger''s complete lines in order, byte for byte'
            cand import 'Append the lines of a JSON-lines file verbatim, all or nothing'
            cand info 'Which ledger is in use: kind, location, lines, bytes'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'discuss;ledger;export'= {
            cand -o 'Write to this file (replaced whole, atomically) instead of stdout'
            cand --output 'Write to this file (replaced whole, atomically) instead of stdout'
            cand --ledger 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]'
            cand --actor 'Recorded as `by` on every record written [default: the OS user name]'
            cand --color 'When to colour output (never with --json; NO_COLOR turns auto off)'
            cand --json 'Print exactly one JSON object on stdout (errors: one on stderr)'
            cand --allow-network-fs 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'discuss;ledger;import'= {
            cand --ledger 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]'
            cand --actor 'Recorded as `by` on every record written [default: the OS user name]'
            cand --color 'When to colour output (never with --json; NO_COLOR turns auto off)'
            cand --json 'Print exactly one JSON object on stdout (errors: one on stderr)'
            cand --allow-network-fs 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'discuss;ledger;info'= {
            cand --ledger 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]'
            cand --actor 'Recorded as `by` on every record written [default: the OS user name]'
            cand --color 'When to colour output (never with --json; NO_COLOR turns auto off)'
            cand --json 'Print exactly one JSON object on stdout (errors: one on stderr)'
            cand --allow-network-fs 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'discuss;ledger;help'= {
            cand export 'Write the ledger''s complete lines in order, byte for byte'
            cand import 'Append the lines of a JSON-lines file verbatim, all or nothing'
            cand info 'Which ledger is in use: kind, location, lines, bytes'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'discuss;ledger;help;export'= {
        }
        &'discuss;ledger;help;import'= {
        }
        &'discuss;ledger;help;info'= {
        }
        &'discuss;ledger;help;help'= {
        }
        &'discuss;mcp'= {
            cand --agent 'Act for this agent only: ask_peer.from_agent_id and reply_discussion.agent_id must be it (agent_mismatch otherwise)'
            cand --ledger 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]'
            cand --actor 'Recorded as `by` on every record written [default: the OS user name]'
            cand --color 'When to colour output (never with --json; NO_COLOR turns auto off)'
            cand --json 'Print exactly one JSON object on stdout (errors: one on stderr)'
            cand --allow-network-fs 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'discuss;completions'= {
            cand --ledger 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]'
            cand --actor 'Recorded as `by` on every record written [default: the OS user name]'
            cand --color 'When to colour output (never with --json; NO_COLOR turns auto off)'
            cand --json 'Print exactly one JSON object on stdout (errors: one on stderr)'
            cand --allow-network-fs 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'discuss;help'= {
            cand fleet 'Register agents in fleets, remove them, list fleets'
            cand ask 'Start a discussion: the root message from one agent to its peer'
            cand wake 'Reserve one budgeted turn for the recipient of the head'
            cand reply 'Answer within a reserved turn (a question or a result)'
            cand show 'Show the derived state of a discussion'
            cand kill-switch 'Engage, release or read the global kill-switch'
            cand quota 'Set or show hourly wake quotas'
            cand call 'Take one of the seed''s request objects (ask_peer, wake_agent, reply_discussion, get_discussion) and answer JSON'
            cand list 'List discussions, newest first'
            cand inbox 'Open discussions whose head is addressed to an agent (reads only)'
            cand verify 'Replay the whole ledger and report problems (exit 7 when any)'
            cand wait 'Wait until a discussion reaches a status (exit 10 on timeout)'
            cand events 'The ledger''s records in order with each one''s discussion status; --follow keeps watching (reads only)'
            cand ledger 'Export, import or describe the ledger (a file or PostgreSQL)'
            cand mcp 'Serve the tools (ask_peer, wake_agent, reply_discussion, get_discussion, list_discussions, inbox) over MCP on stdio'
            cand completions 'Print a completion script'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'discuss;help;fleet'= {
            cand add 'Add agents to a fleet (creating it); agents already in it are skipped'
            cand remove 'Remove agents from a fleet; discussions under way are not touched'
            cand list 'List fleets and their members'
        }
        &'discuss;help;fleet;add'= {
        }
        &'discuss;help;fleet;remove'= {
        }
        &'discuss;help;fleet;list'= {
        }
        &'discuss;help;ask'= {
        }
        &'discuss;help;wake'= {
        }
        &'discuss;help;reply'= {
        }
        &'discuss;help;show'= {
        }
        &'discuss;help;kill-switch'= {
            cand status 'Show whether the switch is engaged (the default)'
            cand on 'Engage the switch'
            cand off 'Release the switch'
        }
        &'discuss;help;kill-switch;status'= {
        }
        &'discuss;help;kill-switch;on'= {
        }
        &'discuss;help;kill-switch;off'= {
        }
        &'discuss;help;quota'= {
            cand set 'Set the quota of one agent, or the default (30 when never set)'
            cand show 'Show the default, each agent''s quota and its wakes in the last hour'
        }
        &'discuss;help;quota;set'= {
        }
        &'discuss;help;quota;show'= {
        }
        &'discuss;help;call'= {
        }
        &'discuss;help;list'= {
        }
        &'discuss;help;inbox'= {
        }
        &'discuss;help;verify'= {
        }
        &'discuss;help;wait'= {
        }
        &'discuss;help;events'= {
        }
        &'discuss;help;ledger'= {
            cand export 'Write the ledger''s complete lines in order, byte for byte'
            cand import 'Append the lines of a JSON-lines file verbatim, all or nothing'
            cand info 'Which ledger is in use: kind, location, lines, bytes'
        }
        &'discuss;help;ledger;export'= {
        }
        &'discuss;help;ledger;import'= {
        }
        &'discuss;help;ledger;info'= {
        }
        &'discuss;help;mcp'= {
        }
        &'discuss;help;completions'= {
        }
        &'discuss;help;help'= {
        }
    ]
    $completions[$command]
}
