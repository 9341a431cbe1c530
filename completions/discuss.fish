# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_discuss_global_optspecs
    string join \n ledger= json actor= allow-network-fs color= h/help V/version
end

function __fish_discuss_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_discuss_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_discuss_using_subcommand
    set -l cmd (__fish_discuss_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c discuss -n "__fish_discuss_needs_command" -l ledger -d 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]' -r -F
complete -c discuss -n "__fish_discuss_needs_command" -l actor -d 'Recorded as `by` on every record written [default: the OS user name]' -r
complete -c discuss -n "__fish_discuss_needs_command" -l color -d 'When to colour output (never with --json; NO_COLOR turns auto off)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c discuss -n "__fish_discuss_needs_command" -l json -d 'Print exactly one JSON object on stdout (errors: one on stderr)'
complete -c discuss -n "__fish_discuss_needs_command" -l allow-network-fs -d 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
complete -c discuss -n "__fish_discuss_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c discuss -n "__fish_discuss_needs_command" -s V -l version -d 'Print version'
complete -c discuss -n "__fish_discuss_needs_command" -f -a "fleet" -d 'Register agents in fleets, remove them, list fleets'
complete -c discuss -n "__fish_discuss_needs_command" -f -a "ask" -d 'Start a discussion: the root message from one agent to its peer'
complete -c discuss -n "__fish_discuss_needs_command" -f -a "wake" -d 'Reserve one budgeted turn for the recipient of the head'
complete -c discuss -n "__fish_discuss_needs_command" -f -a "reply" -d 'Answer within a reserved turn (a question or a result)'
complete -c discuss -n "__fish_discuss_needs_command" -f -a "show" -d 'Show the derived state of a discussion'
complete -c discuss -n "__fish_discuss_needs_command" -f -a "kill-switch" -d 'Engage, release or read the global kill-switch'
complete -c discuss -n "__fish_discuss_needs_command" -f -a "quota" -d 'Set or show hourly wake quotas'
complete -c discuss -n "__fish_discuss_needs_command" -f -a "call" -d 'Take one of the seed\'s request objects (ask_peer, wake_agent, reply_discussion, get_discussion) and answer JSON'
complete -c discuss -n "__fish_discuss_needs_command" -f -a "list" -d 'List discussions, newest first'
complete -c discuss -n "__fish_discuss_needs_command" -f -a "inbox" -d 'Open discussions whose head is addressed to an agent (reads only)'
complete -c discuss -n "__fish_discuss_needs_command" -f -a "verify" -d 'Replay the whole ledger and report problems (exit 7 when any)'
complete -c discuss -n "__fish_discuss_needs_command" -f -a "wait" -d 'Wait until a discussion reaches a status (exit 10 on timeout)'
complete -c discuss -n "__fish_discuss_needs_command" -f -a "events" -d 'The ledger\'s records in order with each one\'s discussion status; --follow keeps watching (reads only)'
complete -c discuss -n "__fish_discuss_needs_command" -f -a "ledger" -d 'Export, import or describe the ledger (a file or PostgreSQL)'
complete -c discuss -n "__fish_discuss_needs_command" -f -a "mcp" -d 'Serve the tools (ask_peer, wake_agent, reply_discussion, get_discussion, list_discussions, inbox) over MCP on stdio'
complete -c discuss -n "__fish_discuss_needs_command" -f -a "completions" -d 'Print a completion script'
complete -c discuss -n "__fish_discuss_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c discuss -n "__fish_discuss_using_subcommand fleet; and not __fish_seen_subcommand_from add remove list help" -l ledger -d 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]' -r -F
complete -c discuss -n "__fish_discuss_using_subcommand fleet; and not __fish_seen_subcommand_from add remove list help" -l actor -d 'Recorded as `by` on every record written [default: the OS user name]' -r
complete -c discuss -n "__fish_discuss_using_subcommand fleet; and not __fish_seen_subcommand_from add remove list help" -l color -d 'When to colour output (never with --json; NO_COLOR turns auto off)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c discuss -n "__fish_discuss_using_subcommand fleet; and not __fish_seen_subcommand_from add remove list help" -l json -d 'Print exactly one JSON object on stdout (errors: one on stderr)'
complete -c discuss -n "__fish_discuss_using_subcommand fleet; and not __fish_seen_subcommand_from add remove list help" -l allow-network-fs -d 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
complete -c discuss -n "__fish_discuss_using_subcommand fleet; and not __fish_seen_subcommand_from add remove list help" -s h -l help -d 'Print help'
complete -c discuss -n "__fish_discuss_using_subcommand fleet; and not __fish_seen_subcommand_from add remove list help" -s V -l version -d 'Print version'
complete -c discuss -n "__fish_discuss_using_subcommand fleet; and not __fish_seen_subcommand_from add remove list help" -f -a "add" -d 'Add agents to a fleet (creating it); agents already in it are skipped'
complete -c discuss -n "__fish_discuss_using_subcommand fleet; and not __fish_seen_subcommand_from add remove list help" -f -a "remove" -d 'Remove agents from a fleet; discussions under way are not touched'
complete -c discuss -n "__fish_discuss_using_subcommand fleet; and not __fish_seen_subcommand_from add remove list help" -f -a "list" -d 'List fleets and their members'
complete -c discuss -n "__fish_discuss_using_subcommand fleet; and not __fish_seen_subcommand_from add remove list help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c discuss -n "__fish_discuss_using_subcommand fleet; and __fish_seen_subcommand_from add" -l ledger -d 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]' -r -F
complete -c discuss -n "__fish_discuss_using_subcommand fleet; and __fish_seen_subcommand_from add" -l actor -d 'Recorded as `by` on every record written [default: the OS user name]' -r
complete -c discuss -n "__fish_discuss_using_subcommand fleet; and __fish_seen_subcommand_from add" -l color -d 'When to colour output (never with --json; NO_COLOR turns auto off)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c discuss -n "__fish_discuss_using_subcommand fleet; and __fish_seen_subcommand_from add" -l json -d 'Print exactly one JSON object on stdout (errors: one on stderr)'
complete -c discuss -n "__fish_discuss_using_subcommand fleet; and __fish_seen_subcommand_from add" -l allow-network-fs -d 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
complete -c discuss -n "__fish_discuss_using_subcommand fleet; and __fish_seen_subcommand_from add" -s h -l help -d 'Print help'
complete -c discuss -n "__fish_discuss_using_subcommand fleet; and __fish_seen_subcommand_from add" -s V -l version -d 'Print version'
complete -c discuss -n "__fish_discuss_using_subcommand fleet; and __fish_seen_subcommand_from remove" -l ledger -d 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]' -r -F
complete -c discuss -n "__fish_discuss_using_subcommand fleet; and __fish_seen_subcommand_from remove" -l actor -d 'Recorded as `by` on every record written [default: the OS user name]' -r
complete -c discuss -n "__fish_discuss_using_subcommand fleet; and __fish_seen_subcommand_from remove" -l color -d 'When to colour output (never with --json; NO_COLOR turns auto off)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c discuss -n "__fish_discuss_using_subcommand fleet; and __fish_seen_subcommand_from remove" -l json -d 'Print exactly one JSON object on stdout (errors: one on stderr)'
complete -c discuss -n "__fish_discuss_using_subcommand fleet; and __fish_seen_subcommand_from remove" -l allow-network-fs -d 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
complete -c discuss -n "__fish_discuss_using_subcommand fleet; and __fish_seen_subcommand_from remove" -s h -l help -d 'Print help'
complete -c discuss -n "__fish_discuss_using_subcommand fleet; and __fish_seen_subcommand_from remove" -s V -l version -d 'Print version'
complete -c discuss -n "__fish_discuss_using_subcommand fleet; and __fish_seen_subcommand_from list" -l ledger -d 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]' -r -F
complete -c discuss -n "__fish_discuss_using_subcommand fleet; and __fish_seen_subcommand_from list" -l actor -d 'Recorded as `by` on every record written [default: the OS user name]' -r
complete -c discuss -n "__fish_discuss_using_subcommand fleet; and __fish_seen_subcommand_from list" -l color -d 'When to colour output (never with --json; NO_COLOR turns auto off)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c discuss -n "__fish_discuss_using_subcommand fleet; and __fish_seen_subcommand_from list" -l json -d 'Print exactly one JSON object on stdout (errors: one on stderr)'
complete -c discuss -n "__fish_discuss_using_subcommand fleet; and __fish_seen_subcommand_from list" -l allow-network-fs -d 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
complete -c discuss -n "__fish_discuss_using_subcommand fleet; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c discuss -n "__fish_discuss_using_subcommand fleet; and __fish_seen_subcommand_from list" -s V -l version -d 'Print version'
complete -c discuss -n "__fish_discuss_using_subcommand fleet; and __fish_seen_subcommand_from help" -f -a "add" -d 'Add agents to a fleet (creating it); agents already in it are skipped'
complete -c discuss -n "__fish_discuss_using_subcommand fleet; and __fish_seen_subcommand_from help" -f -a "remove" -d 'Remove agents from a fleet; discussions under way are not touched'
complete -c discuss -n "__fish_discuss_using_subcommand fleet; and __fish_seen_subcommand_from help" -f -a "list" -d 'List fleets and their members'
complete -c discuss -n "__fish_discuss_using_subcommand fleet; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c discuss -n "__fish_discuss_using_subcommand ask" -l from -d 'The asking agent' -r
complete -c discuss -n "__fish_discuss_using_subcommand ask" -l to -d 'The peer (exactly one: group discussions are refused)' -r
complete -c discuss -n "__fish_discuss_using_subcommand ask" -l fleet -d 'The fleet both agents belong to' -r
complete -c discuss -n "__fish_discuss_using_subcommand ask" -l payload -d 'The message body as JSON (any JSON value)' -r
complete -c discuss -n "__fish_discuss_using_subcommand ask" -l payload-file -d 'Read the JSON body from a file, or from stdin with `-`' -r -F
complete -c discuss -n "__fish_discuss_using_subcommand ask" -l max-turns -d 'Turn budget, the root included (2 to 32)' -r
complete -c discuss -n "__fish_discuss_using_subcommand ask" -l timeout-ms -d 'Conversation deadline after the root, in ms (1000 to 900000)' -r
complete -c discuss -n "__fish_discuss_using_subcommand ask" -l turn-timeout-ms -d 'Deadline of each turn, in ms (1000 to 300000, at most --timeout-ms)' -r
complete -c discuss -n "__fish_discuss_using_subcommand ask" -l idempotency-key -d 'Makes the write safe to retry: the same key with the same arguments answers the original result ("replayed": true) and writes nothing; with other arguments it is refused (idempotency_conflict)' -r
complete -c discuss -n "__fish_discuss_using_subcommand ask" -l kill-grace-ms -d 'Grace period between SIGTERM and SIGKILL of a supervised run, in ms' -r
complete -c discuss -n "__fish_discuss_using_subcommand ask" -l env -d 'With --clean-env: also pass this variable on (repeatable)' -r
complete -c discuss -n "__fish_discuss_using_subcommand ask" -l ledger -d 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]' -r -F
complete -c discuss -n "__fish_discuss_using_subcommand ask" -l actor -d 'Recorded as `by` on every record written [default: the OS user name]' -r
complete -c discuss -n "__fish_discuss_using_subcommand ask" -l color -d 'When to colour output (never with --json; NO_COLOR turns auto off)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c discuss -n "__fish_discuss_using_subcommand ask" -l wake-peer -d 'Reserve the peer\'s first turn in the same atomic write'
complete -c discuss -n "__fish_discuss_using_subcommand ask" -s q -l quiet -d 'Print only the ids (the new discussion, the new attempt, or one listed discussion a line), also with --json'
complete -c discuss -n "__fish_discuss_using_subcommand ask" -l reply-from-stdout -d 'Capture the command\'s stdout; if it exits 0 without replying, post the output as a `result` reply (JSON body when it is JSON, else {"text": ...})'
complete -c discuss -n "__fish_discuss_using_subcommand ask" -l close-on-reply -d 'With --reply-from-stdout: close the discussion with that reply'
complete -c discuss -n "__fish_discuss_using_subcommand ask" -l clean-env -d 'Start the command with only PATH, HOME, LANG, TERM, the DISCUSS_* variables and those named by --env, instead of this whole environment'
complete -c discuss -n "__fish_discuss_using_subcommand ask" -l json -d 'Print exactly one JSON object on stdout (errors: one on stderr)'
complete -c discuss -n "__fish_discuss_using_subcommand ask" -l allow-network-fs -d 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
complete -c discuss -n "__fish_discuss_using_subcommand ask" -s h -l help -d 'Print help'
complete -c discuss -n "__fish_discuss_using_subcommand ask" -s V -l version -d 'Print version'
complete -c discuss -n "__fish_discuss_using_subcommand wake" -l agent -d 'The agent to wake: the recipient of the head' -r
complete -c discuss -n "__fish_discuss_using_subcommand wake" -l discussion -d 'The discussion' -r
complete -c discuss -n "__fish_discuss_using_subcommand wake" -l expected-head -d 'The head message the caller saw; refused as stale_head if it moved' -r
complete -c discuss -n "__fish_discuss_using_subcommand wake" -l idempotency-key -d 'Makes the write safe to retry: the same key with the same arguments answers the original result ("replayed": true) and writes nothing; with other arguments it is refused (idempotency_conflict)' -r
complete -c discuss -n "__fish_discuss_using_subcommand wake" -l kill-grace-ms -d 'Grace period between SIGTERM and SIGKILL of a supervised run, in ms' -r
complete -c discuss -n "__fish_discuss_using_subcommand wake" -l env -d 'With --clean-env: also pass this variable on (repeatable)' -r
complete -c discuss -n "__fish_discuss_using_subcommand wake" -l ledger -d 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]' -r -F
complete -c discuss -n "__fish_discuss_using_subcommand wake" -l actor -d 'Recorded as `by` on every record written [default: the OS user name]' -r
complete -c discuss -n "__fish_discuss_using_subcommand wake" -l color -d 'When to colour output (never with --json; NO_COLOR turns auto off)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c discuss -n "__fish_discuss_using_subcommand wake" -s q -l quiet -d 'Print only the ids (the new discussion, the new attempt, or one listed discussion a line), also with --json'
complete -c discuss -n "__fish_discuss_using_subcommand wake" -l reply-from-stdout -d 'Capture the command\'s stdout; if it exits 0 without replying, post the output as a `result` reply (JSON body when it is JSON, else {"text": ...})'
complete -c discuss -n "__fish_discuss_using_subcommand wake" -l close-on-reply -d 'With --reply-from-stdout: close the discussion with that reply'
complete -c discuss -n "__fish_discuss_using_subcommand wake" -l clean-env -d 'Start the command with only PATH, HOME, LANG, TERM, the DISCUSS_* variables and those named by --env, instead of this whole environment'
complete -c discuss -n "__fish_discuss_using_subcommand wake" -l json -d 'Print exactly one JSON object on stdout (errors: one on stderr)'
complete -c discuss -n "__fish_discuss_using_subcommand wake" -l allow-network-fs -d 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
complete -c discuss -n "__fish_discuss_using_subcommand wake" -s h -l help -d 'Print help'
complete -c discuss -n "__fish_discuss_using_subcommand wake" -s V -l version -d 'Print version'
complete -c discuss -n "__fish_discuss_using_subcommand reply" -l agent -d 'The woken agent' -r
complete -c discuss -n "__fish_discuss_using_subcommand reply" -l discussion -d 'The discussion' -r
complete -c discuss -n "__fish_discuss_using_subcommand reply" -l attempt -d 'The attempt `wake` reserved' -r
complete -c discuss -n "__fish_discuss_using_subcommand reply" -l reply-to -d 'The head message being answered' -r
complete -c discuss -n "__fish_discuss_using_subcommand reply" -l type -d 'A question back to the other agent, or a result' -r -f -a "question\t''
result\t''"
complete -c discuss -n "__fish_discuss_using_subcommand reply" -l payload -d 'The message body as JSON (any JSON value)' -r
complete -c discuss -n "__fish_discuss_using_subcommand reply" -l payload-file -d 'Read the JSON body from a file, or from stdin with `-`' -r -F
complete -c discuss -n "__fish_discuss_using_subcommand reply" -l idempotency-key -d 'Makes the write safe to retry: the same key with the same arguments answers the original result ("replayed": true) and writes nothing; with other arguments it is refused (idempotency_conflict)' -r
complete -c discuss -n "__fish_discuss_using_subcommand reply" -l ledger -d 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]' -r -F
complete -c discuss -n "__fish_discuss_using_subcommand reply" -l actor -d 'Recorded as `by` on every record written [default: the OS user name]' -r
complete -c discuss -n "__fish_discuss_using_subcommand reply" -l color -d 'When to colour output (never with --json; NO_COLOR turns auto off)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c discuss -n "__fish_discuss_using_subcommand reply" -l close -d 'End the discussion with this reply'
complete -c discuss -n "__fish_discuss_using_subcommand reply" -l json -d 'Print exactly one JSON object on stdout (errors: one on stderr)'
complete -c discuss -n "__fish_discuss_using_subcommand reply" -l allow-network-fs -d 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
complete -c discuss -n "__fish_discuss_using_subcommand reply" -s h -l help -d 'Print help'
complete -c discuss -n "__fish_discuss_using_subcommand reply" -s V -l version -d 'Print version'
complete -c discuss -n "__fish_discuss_using_subcommand show" -l format -d 'Human output as a terminal table, or a Markdown document with every body whole (--json prints the contract\'s object)' -r -f -a "human\t''
markdown\t''"
complete -c discuss -n "__fish_discuss_using_subcommand show" -l ledger -d 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]' -r -F
complete -c discuss -n "__fish_discuss_using_subcommand show" -l actor -d 'Recorded as `by` on every record written [default: the OS user name]' -r
complete -c discuss -n "__fish_discuss_using_subcommand show" -l color -d 'When to colour output (never with --json; NO_COLOR turns auto off)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c discuss -n "__fish_discuss_using_subcommand show" -l no-receipts -d 'Leave out the receipts of each transcript entry'
complete -c discuss -n "__fish_discuss_using_subcommand show" -l json -d 'Print exactly one JSON object on stdout (errors: one on stderr)'
complete -c discuss -n "__fish_discuss_using_subcommand show" -l allow-network-fs -d 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
complete -c discuss -n "__fish_discuss_using_subcommand show" -s h -l help -d 'Print help'
complete -c discuss -n "__fish_discuss_using_subcommand show" -s V -l version -d 'Print version'
complete -c discuss -n "__fish_discuss_using_subcommand kill-switch; and not __fish_seen_subcommand_from status on off help" -l ledger -d 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]' -r -F
complete -c discuss -n "__fish_discuss_using_subcommand kill-switch; and not __fish_seen_subcommand_from status on off help" -l actor -d 'Recorded as `by` on every record written [default: the OS user name]' -r
complete -c discuss -n "__fish_discuss_using_subcommand kill-switch; and not __fish_seen_subcommand_from status on off help" -l color -d 'When to colour output (never with --json; NO_COLOR turns auto off)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c discuss -n "__fish_discuss_using_subcommand kill-switch; and not __fish_seen_subcommand_from status on off help" -l json -d 'Print exactly one JSON object on stdout (errors: one on stderr)'
complete -c discuss -n "__fish_discuss_using_subcommand kill-switch; and not __fish_seen_subcommand_from status on off help" -l allow-network-fs -d 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
complete -c discuss -n "__fish_discuss_using_subcommand kill-switch; and not __fish_seen_subcommand_from status on off help" -s h -l help -d 'Print help'
complete -c discuss -n "__fish_discuss_using_subcommand kill-switch; and not __fish_seen_subcommand_from status on off help" -s V -l version -d 'Print version'
complete -c discuss -n "__fish_discuss_using_subcommand kill-switch; and not __fish_seen_subcommand_from status on off help" -f -a "status" -d 'Show whether the switch is engaged (the default)'
complete -c discuss -n "__fish_discuss_using_subcommand kill-switch; and not __fish_seen_subcommand_from status on off help" -f -a "on" -d 'Engage the switch'
complete -c discuss -n "__fish_discuss_using_subcommand kill-switch; and not __fish_seen_subcommand_from status on off help" -f -a "off" -d 'Release the switch'
complete -c discuss -n "__fish_discuss_using_subcommand kill-switch; and not __fish_seen_subcommand_from status on off help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c discuss -n "__fish_discuss_using_subcommand kill-switch; and __fish_seen_subcommand_from status" -l ledger -d 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]' -r -F
complete -c discuss -n "__fish_discuss_using_subcommand kill-switch; and __fish_seen_subcommand_from status" -l actor -d 'Recorded as `by` on every record written [default: the OS user name]' -r
complete -c discuss -n "__fish_discuss_using_subcommand kill-switch; and __fish_seen_subcommand_from status" -l color -d 'When to colour output (never with --json; NO_COLOR turns auto off)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c discuss -n "__fish_discuss_using_subcommand kill-switch; and __fish_seen_subcommand_from status" -l json -d 'Print exactly one JSON object on stdout (errors: one on stderr)'
complete -c discuss -n "__fish_discuss_using_subcommand kill-switch; and __fish_seen_subcommand_from status" -l allow-network-fs -d 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
complete -c discuss -n "__fish_discuss_using_subcommand kill-switch; and __fish_seen_subcommand_from status" -s h -l help -d 'Print help'
complete -c discuss -n "__fish_discuss_using_subcommand kill-switch; and __fish_seen_subcommand_from status" -s V -l version -d 'Print version'
complete -c discuss -n "__fish_discuss_using_subcommand kill-switch; and __fish_seen_subcommand_from on" -l reason -d 'Why; shown to everyone who is refused' -r
complete -c discuss -n "__fish_discuss_using_subcommand kill-switch; and __fish_seen_subcommand_from on" -l ledger -d 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]' -r -F
complete -c discuss -n "__fish_discuss_using_subcommand kill-switch; and __fish_seen_subcommand_from on" -l actor -d 'Recorded as `by` on every record written [default: the OS user name]' -r
complete -c discuss -n "__fish_discuss_using_subcommand kill-switch; and __fish_seen_subcommand_from on" -l color -d 'When to colour output (never with --json; NO_COLOR turns auto off)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c discuss -n "__fish_discuss_using_subcommand kill-switch; and __fish_seen_subcommand_from on" -l json -d 'Print exactly one JSON object on stdout (errors: one on stderr)'
complete -c discuss -n "__fish_discuss_using_subcommand kill-switch; and __fish_seen_subcommand_from on" -l allow-network-fs -d 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
complete -c discuss -n "__fish_discuss_using_subcommand kill-switch; and __fish_seen_subcommand_from on" -s h -l help -d 'Print help'
complete -c discuss -n "__fish_discuss_using_subcommand kill-switch; and __fish_seen_subcommand_from on" -s V -l version -d 'Print version'
complete -c discuss -n "__fish_discuss_using_subcommand kill-switch; and __fish_seen_subcommand_from off" -l ledger -d 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]' -r -F
complete -c discuss -n "__fish_discuss_using_subcommand kill-switch; and __fish_seen_subcommand_from off" -l actor -d 'Recorded as `by` on every record written [default: the OS user name]' -r
complete -c discuss -n "__fish_discuss_using_subcommand kill-switch; and __fish_seen_subcommand_from off" -l color -d 'When to colour output (never with --json; NO_COLOR turns auto off)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c discuss -n "__fish_discuss_using_subcommand kill-switch; and __fish_seen_subcommand_from off" -l json -d 'Print exactly one JSON object on stdout (errors: one on stderr)'
complete -c discuss -n "__fish_discuss_using_subcommand kill-switch; and __fish_seen_subcommand_from off" -l allow-network-fs -d 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
complete -c discuss -n "__fish_discuss_using_subcommand kill-switch; and __fish_seen_subcommand_from off" -s h -l help -d 'Print help'
complete -c discuss -n "__fish_discuss_using_subcommand kill-switch; and __fish_seen_subcommand_from off" -s V -l version -d 'Print version'
complete -c discuss -n "__fish_discuss_using_subcommand kill-switch; and __fish_seen_subcommand_from help" -f -a "status" -d 'Show whether the switch is engaged (the default)'
complete -c discuss -n "__fish_discuss_using_subcommand kill-switch; and __fish_seen_subcommand_from help" -f -a "on" -d 'Engage the switch'
complete -c discuss -n "__fish_discuss_using_subcommand kill-switch; and __fish_seen_subcommand_from help" -f -a "off" -d 'Release the switch'
complete -c discuss -n "__fish_discuss_using_subcommand kill-switch; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c discuss -n "__fish_discuss_using_subcommand quota; and not __fish_seen_subcommand_from set show help" -l ledger -d 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]' -r -F
complete -c discuss -n "__fish_discuss_using_subcommand quota; and not __fish_seen_subcommand_from set show help" -l actor -d 'Recorded as `by` on every record written [default: the OS user name]' -r
complete -c discuss -n "__fish_discuss_using_subcommand quota; and not __fish_seen_subcommand_from set show help" -l color -d 'When to colour output (never with --json; NO_COLOR turns auto off)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c discuss -n "__fish_discuss_using_subcommand quota; and not __fish_seen_subcommand_from set show help" -l json -d 'Print exactly one JSON object on stdout (errors: one on stderr)'
complete -c discuss -n "__fish_discuss_using_subcommand quota; and not __fish_seen_subcommand_from set show help" -l allow-network-fs -d 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
complete -c discuss -n "__fish_discuss_using_subcommand quota; and not __fish_seen_subcommand_from set show help" -s h -l help -d 'Print help'
complete -c discuss -n "__fish_discuss_using_subcommand quota; and not __fish_seen_subcommand_from set show help" -s V -l version -d 'Print version'
complete -c discuss -n "__fish_discuss_using_subcommand quota; and not __fish_seen_subcommand_from set show help" -f -a "set" -d 'Set the quota of one agent, or the default (30 when never set)'
complete -c discuss -n "__fish_discuss_using_subcommand quota; and not __fish_seen_subcommand_from set show help" -f -a "show" -d 'Show the default, each agent\'s quota and its wakes in the last hour'
complete -c discuss -n "__fish_discuss_using_subcommand quota; and not __fish_seen_subcommand_from set show help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c discuss -n "__fish_discuss_using_subcommand quota; and __fish_seen_subcommand_from set" -l agent -d 'The agent; without it, the default is set' -r
complete -c discuss -n "__fish_discuss_using_subcommand quota; and __fish_seen_subcommand_from set" -l ledger -d 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]' -r -F
complete -c discuss -n "__fish_discuss_using_subcommand quota; and __fish_seen_subcommand_from set" -l actor -d 'Recorded as `by` on every record written [default: the OS user name]' -r
complete -c discuss -n "__fish_discuss_using_subcommand quota; and __fish_seen_subcommand_from set" -l color -d 'When to colour output (never with --json; NO_COLOR turns auto off)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c discuss -n "__fish_discuss_using_subcommand quota; and __fish_seen_subcommand_from set" -l json -d 'Print exactly one JSON object on stdout (errors: one on stderr)'
complete -c discuss -n "__fish_discuss_using_subcommand quota; and __fish_seen_subcommand_from set" -l allow-network-fs -d 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
complete -c discuss -n "__fish_discuss_using_subcommand quota; and __fish_seen_subcommand_from set" -s h -l help -d 'Print help'
complete -c discuss -n "__fish_discuss_using_subcommand quota; and __fish_seen_subcommand_from set" -s V -l version -d 'Print version'
complete -c discuss -n "__fish_discuss_using_subcommand quota; and __fish_seen_subcommand_from show" -l ledger -d 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]' -r -F
complete -c discuss -n "__fish_discuss_using_subcommand quota; and __fish_seen_subcommand_from show" -l actor -d 'Recorded as `by` on every record written [default: the OS user name]' -r
complete -c discuss -n "__fish_discuss_using_subcommand quota; and __fish_seen_subcommand_from show" -l color -d 'When to colour output (never with --json; NO_COLOR turns auto off)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c discuss -n "__fish_discuss_using_subcommand quota; and __fish_seen_subcommand_from show" -l json -d 'Print exactly one JSON object on stdout (errors: one on stderr)'
complete -c discuss -n "__fish_discuss_using_subcommand quota; and __fish_seen_subcommand_from show" -l allow-network-fs -d 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
complete -c discuss -n "__fish_discuss_using_subcommand quota; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help'
complete -c discuss -n "__fish_discuss_using_subcommand quota; and __fish_seen_subcommand_from show" -s V -l version -d 'Print version'
complete -c discuss -n "__fish_discuss_using_subcommand quota; and __fish_seen_subcommand_from help" -f -a "set" -d 'Set the quota of one agent, or the default (30 when never set)'
complete -c discuss -n "__fish_discuss_using_subcommand quota; and __fish_seen_subcommand_from help" -f -a "show" -d 'Show the default, each agent\'s quota and its wakes in the last hour'
complete -c discuss -n "__fish_discuss_using_subcommand quota; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c discuss -n "__fish_discuss_using_subcommand call" -l ledger -d 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]' -r -F
complete -c discuss -n "__fish_discuss_using_subcommand call" -l actor -d 'Recorded as `by` on every record written [default: the OS user name]' -r
complete -c discuss -n "__fish_discuss_using_subcommand call" -l color -d 'When to colour output (never with --json; NO_COLOR turns auto off)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c discuss -n "__fish_discuss_using_subcommand call" -l json -d 'Print exactly one JSON object on stdout (errors: one on stderr)'
complete -c discuss -n "__fish_discuss_using_subcommand call" -l allow-network-fs -d 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
complete -c discuss -n "__fish_discuss_using_subcommand call" -s h -l help -d 'Print help'
complete -c discuss -n "__fish_discuss_using_subcommand call" -s V -l version -d 'Print version'
complete -c discuss -n "__fish_discuss_using_subcommand list" -l status -d 'Only these statuses (repeatable or comma-separated; `terminal` for closed, deadman, expired, exhausted and invalid)' -r
complete -c discuss -n "__fish_discuss_using_subcommand list" -l agent -d 'Only discussions this agent takes part in' -r
complete -c discuss -n "__fish_discuss_using_subcommand list" -l fleet -d 'Only discussions of this fleet' -r
complete -c discuss -n "__fish_discuss_using_subcommand list" -l ledger -d 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]' -r -F
complete -c discuss -n "__fish_discuss_using_subcommand list" -l actor -d 'Recorded as `by` on every record written [default: the OS user name]' -r
complete -c discuss -n "__fish_discuss_using_subcommand list" -l color -d 'When to colour output (never with --json; NO_COLOR turns auto off)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c discuss -n "__fish_discuss_using_subcommand list" -s q -l quiet -d 'Print only the ids (the new discussion, the new attempt, or one listed discussion a line), also with --json'
complete -c discuss -n "__fish_discuss_using_subcommand list" -l json -d 'Print exactly one JSON object on stdout (errors: one on stderr)'
complete -c discuss -n "__fish_discuss_using_subcommand list" -l allow-network-fs -d 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
complete -c discuss -n "__fish_discuss_using_subcommand list" -s h -l help -d 'Print help'
complete -c discuss -n "__fish_discuss_using_subcommand list" -s V -l version -d 'Print version'
complete -c discuss -n "__fish_discuss_using_subcommand inbox" -l agent -d 'The agent' -r
complete -c discuss -n "__fish_discuss_using_subcommand inbox" -l ledger -d 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]' -r -F
complete -c discuss -n "__fish_discuss_using_subcommand inbox" -l actor -d 'Recorded as `by` on every record written [default: the OS user name]' -r
complete -c discuss -n "__fish_discuss_using_subcommand inbox" -l color -d 'When to colour output (never with --json; NO_COLOR turns auto off)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c discuss -n "__fish_discuss_using_subcommand inbox" -s q -l quiet -d 'Print only the ids (the new discussion, the new attempt, or one listed discussion a line), also with --json'
complete -c discuss -n "__fish_discuss_using_subcommand inbox" -l json -d 'Print exactly one JSON object on stdout (errors: one on stderr)'
complete -c discuss -n "__fish_discuss_using_subcommand inbox" -l allow-network-fs -d 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
complete -c discuss -n "__fish_discuss_using_subcommand inbox" -s h -l help -d 'Print help'
complete -c discuss -n "__fish_discuss_using_subcommand inbox" -s V -l version -d 'Print version'
complete -c discuss -n "__fish_discuss_using_subcommand verify" -l ledger -d 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]' -r -F
complete -c discuss -n "__fish_discuss_using_subcommand verify" -l actor -d 'Recorded as `by` on every record written [default: the OS user name]' -r
complete -c discuss -n "__fish_discuss_using_subcommand verify" -l color -d 'When to colour output (never with --json; NO_COLOR turns auto off)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c discuss -n "__fish_discuss_using_subcommand verify" -l json -d 'Print exactly one JSON object on stdout (errors: one on stderr)'
complete -c discuss -n "__fish_discuss_using_subcommand verify" -l allow-network-fs -d 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
complete -c discuss -n "__fish_discuss_using_subcommand verify" -s h -l help -d 'Print help'
complete -c discuss -n "__fish_discuss_using_subcommand verify" -s V -l version -d 'Print version'
complete -c discuss -n "__fish_discuss_using_subcommand wait" -l until -d 'Statuses to wait for (comma-separated; `terminal` for any terminal one)' -r
complete -c discuss -n "__fish_discuss_using_subcommand wait" -l timeout-ms -d 'Give up after this many ms (default: wait as long as it takes)' -r
complete -c discuss -n "__fish_discuss_using_subcommand wait" -l ledger -d 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]' -r -F
complete -c discuss -n "__fish_discuss_using_subcommand wait" -l actor -d 'Recorded as `by` on every record written [default: the OS user name]' -r
complete -c discuss -n "__fish_discuss_using_subcommand wait" -l color -d 'When to colour output (never with --json; NO_COLOR turns auto off)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c discuss -n "__fish_discuss_using_subcommand wait" -l json -d 'Print exactly one JSON object on stdout (errors: one on stderr)'
complete -c discuss -n "__fish_discuss_using_subcommand wait" -l allow-network-fs -d 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
complete -c discuss -n "__fish_discuss_using_subcommand wait" -s h -l help -d 'Print help'
complete -c discuss -n "__fish_discuss_using_subcommand wait" -s V -l version -d 'Print version'
complete -c discuss -n "__fish_discuss_using_subcommand events" -l discussion -d 'Only the records of this discussion' -r
complete -c discuss -n "__fish_discuss_using_subcommand events" -l agent -d 'Only the records of discussions this agent takes part in' -r
complete -c discuss -n "__fish_discuss_using_subcommand events" -l ledger -d 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]' -r -F
complete -c discuss -n "__fish_discuss_using_subcommand events" -l actor -d 'Recorded as `by` on every record written [default: the OS user name]' -r
complete -c discuss -n "__fish_discuss_using_subcommand events" -l color -d 'When to colour output (never with --json; NO_COLOR turns auto off)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c discuss -n "__fish_discuss_using_subcommand events" -l follow -d 'Keep watching and print records as they are written'
complete -c discuss -n "__fish_discuss_using_subcommand events" -l json -d 'Print exactly one JSON object on stdout (errors: one on stderr)'
complete -c discuss -n "__fish_discuss_using_subcommand events" -l allow-network-fs -d 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
complete -c discuss -n "__fish_discuss_using_subcommand events" -s h -l help -d 'Print help'
complete -c discuss -n "__fish_discuss_using_subcommand events" -s V -l version -d 'Print version'
complete -c discuss -n "__fish_discuss_using_subcommand ledger; and not __fish_seen_subcommand_from export import info help" -l ledger -d 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]' -r -F
complete -c discuss -n "__fish_discuss_using_subcommand ledger; and not __fish_seen_subcommand_from export import info help" -l actor -d 'Recorded as `by` on every record written [default: the OS user name]' -r
complete -c discuss -n "__fish_discuss_using_subcommand ledger; and not __fish_seen_subcommand_from export import info help" -l color -d 'When to colour output (never with --json; NO_COLOR turns auto off)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c discuss -n "__fish_discuss_using_subcommand ledger; and not __fish_seen_subcommand_from export import info help" -l json -d 'Print exactly one JSON object on stdout (errors: one on stderr)'
complete -c discuss -n "__fish_discuss_using_subcommand ledger; and not __fish_seen_subcommand_from export import info help" -l allow-network-fs -d 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
complete -c discuss -n "__fish_discuss_using_subcommand ledger; and not __fish_seen_subcommand_from export import info help" -s h -l help -d 'Print help'
complete -c discuss -n "__fish_discuss_using_subcommand ledger; and not __fish_seen_subcommand_from export import info help" -s V -l version -d 'Print version'
complete -c discuss -n "__fish_discuss_using_subcommand ledger; and not __fish_seen_subcommand_from export import info help" -f -a "export" -d 'Write the ledger\'s complete lines in order, byte for byte'
complete -c discuss -n "__fish_discuss_using_subcommand ledger; and not __fish_seen_subcommand_from export import info help" -f -a "import" -d 'Append the lines of a JSON-lines file verbatim, all or nothing'
complete -c discuss -n "__fish_discuss_using_subcommand ledger; and not __fish_seen_subcommand_from export import info help" -f -a "info" -d 'Which ledger is in use: kind, location, lines, bytes'
complete -c discuss -n "__fish_discuss_using_subcommand ledger; and not __fish_seen_subcommand_from export import info help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c discuss -n "__fish_discuss_using_subcommand ledger; and __fish_seen_subcommand_from export" -s o -l output -d 'Write to this file (replaced whole, atomically) instead of stdout' -r -F
complete -c discuss -n "__fish_discuss_using_subcommand ledger; and __fish_seen_subcommand_from export" -l ledger -d 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]' -r -F
complete -c discuss -n "__fish_discuss_using_subcommand ledger; and __fish_seen_subcommand_from export" -l actor -d 'Recorded as `by` on every record written [default: the OS user name]' -r
complete -c discuss -n "__fish_discuss_using_subcommand ledger; and __fish_seen_subcommand_from export" -l color -d 'When to colour output (never with --json; NO_COLOR turns auto off)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c discuss -n "__fish_discuss_using_subcommand ledger; and __fish_seen_subcommand_from export" -l json -d 'Print exactly one JSON object on stdout (errors: one on stderr)'
complete -c discuss -n "__fish_discuss_using_subcommand ledger; and __fish_seen_subcommand_from export" -l allow-network-fs -d 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
complete -c discuss -n "__fish_discuss_using_subcommand ledger; and __fish_seen_subcommand_from export" -s h -l help -d 'Print help'
complete -c discuss -n "__fish_discuss_using_subcommand ledger; and __fish_seen_subcommand_from export" -s V -l version -d 'Print version'
complete -c discuss -n "__fish_discuss_using_subcommand ledger; and __fish_seen_subcommand_from import" -l ledger -d 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]' -r -F
complete -c discuss -n "__fish_discuss_using_subcommand ledger; and __fish_seen_subcommand_from import" -l actor -d 'Recorded as `by` on every record written [default: the OS user name]' -r
complete -c discuss -n "__fish_discuss_using_subcommand ledger; and __fish_seen_subcommand_from import" -l color -d 'When to colour output (never with --json; NO_COLOR turns auto off)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c discuss -n "__fish_discuss_using_subcommand ledger; and __fish_seen_subcommand_from import" -l json -d 'Print exactly one JSON object on stdout (errors: one on stderr)'
complete -c discuss -n "__fish_discuss_using_subcommand ledger; and __fish_seen_subcommand_from import" -l allow-network-fs -d 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
complete -c discuss -n "__fish_discuss_using_subcommand ledger; and __fish_seen_subcommand_from import" -s h -l help -d 'Print help'
complete -c discuss -n "__fish_discuss_using_subcommand ledger; and __fish_seen_subcommand_from import" -s V -l version -d 'Print version'
complete -c discuss -n "__fish_discuss_using_subcommand ledger; and __fish_seen_subcommand_from info" -l ledger -d 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]' -r -F
complete -c discuss -n "__fish_discuss_using_subcommand ledger; and __fish_seen_subcommand_from info" -l actor -d 'Recorded as `by` on every record written [default: the OS user name]' -r
complete -c discuss -n "__fish_discuss_using_subcommand ledger; and __fish_seen_subcommand_from info" -l color -d 'When to colour output (never with --json; NO_COLOR turns auto off)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c discuss -n "__fish_discuss_using_subcommand ledger; and __fish_seen_subcommand_from info" -l json -d 'Print exactly one JSON object on stdout (errors: one on stderr)'
complete -c discuss -n "__fish_discuss_using_subcommand ledger; and __fish_seen_subcommand_from info" -l allow-network-fs -d 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
complete -c discuss -n "__fish_discuss_using_subcommand ledger; and __fish_seen_subcommand_from info" -s h -l help -d 'Print help'
complete -c discuss -n "__fish_discuss_using_subcommand ledger; and __fish_seen_subcommand_from info" -s V -l version -d 'Print version'
complete -c discuss -n "__fish_discuss_using_subcommand ledger; and __fish_seen_subcommand_from help" -f -a "export" -d 'Write the ledger\'s complete lines in order, byte for byte'
complete -c discuss -n "__fish_discuss_using_subcommand ledger; and __fish_seen_subcommand_from help" -f -a "import" -d 'Append the lines of a JSON-lines file verbatim, all or nothing'
complete -c discuss -n "__fish_discuss_using_subcommand ledger; and __fish_seen_subcommand_from help" -f -a "info" -d 'Which ledger is in use: kind, location, lines, bytes'
complete -c discuss -n "__fish_discuss_using_subcommand ledger; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c discuss -n "__fish_discuss_using_subcommand mcp" -l agent -d 'Act for this agent only: ask_peer.from_agent_id and reply_discussion.agent_id must be it (agent_mismatch otherwise)' -r
complete -c discuss -n "__fish_discuss_using_subcommand mcp" -l ledger -d 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]' -r -F
complete -c discuss -n "__fish_discuss_using_subcommand mcp" -l actor -d 'Recorded as `by` on every record written [default: the OS user name]' -r
complete -c discuss -n "__fish_discuss_using_subcommand mcp" -l color -d 'When to colour output (never with --json; NO_COLOR turns auto off)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c discuss -n "__fish_discuss_using_subcommand mcp" -l json -d 'Print exactly one JSON object on stdout (errors: one on stderr)'
complete -c discuss -n "__fish_discuss_using_subcommand mcp" -l allow-network-fs -d 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
complete -c discuss -n "__fish_discuss_using_subcommand mcp" -s h -l help -d 'Print help'
complete -c discuss -n "__fish_discuss_using_subcommand mcp" -s V -l version -d 'Print version'
complete -c discuss -n "__fish_discuss_using_subcommand completions" -l ledger -d 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]' -r -F
complete -c discuss -n "__fish_discuss_using_subcommand completions" -l actor -d 'Recorded as `by` on every record written [default: the OS user name]' -r
complete -c discuss -n "__fish_discuss_using_subcommand completions" -l color -d 'When to colour output (never with --json; NO_COLOR turns auto off)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c discuss -n "__fish_discuss_using_subcommand completions" -l json -d 'Print exactly one JSON object on stdout (errors: one on stderr)'
complete -c discuss -n "__fish_discuss_using_subcommand completions" -l allow-network-fs -d 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there'
complete -c discuss -n "__fish_discuss_using_subcommand completions" -s h -l help -d 'Print help'
complete -c discuss -n "__fish_discuss_using_subcommand completions" -s V -l version -d 'Print version'
complete -c discuss -n "__fish_discuss_using_subcommand help; and not __fish_seen_subcommand_from fleet ask wake reply show kill-switch quota call list inbox verify wait events ledger mcp completions help" -f -a "fleet" -d 'Register agents in fleets, remove them, list fleets'
complete -c discuss -n "__fish_discuss_using_subcommand help; and not __fish_seen_subcommand_from fleet ask wake reply show kill-switch quota call list inbox verify wait events ledger mcp completions help" -f -a "ask" -d 'Start a discussion: the root message from one agent to its peer'
complete -c discuss -n "__fish_discuss_using_subcommand help; and not __fish_seen_subcommand_from fleet ask wake reply show kill-switch quota call list inbox verify wait events ledger mcp completions help" -f -a "wake" -d 'Reserve one budgeted turn for the recipient of the head'
complete -c discuss -n "__fish_discuss_using_subcommand help; and not __fish_seen_subcommand_from fleet ask wake reply show kill-switch quota call list inbox verify wait events ledger mcp completions help" -f -a "reply" -d 'Answer within a reserved turn (a question or a result)'
complete -c discuss -n "__fish_discuss_using_subcommand help; and not __fish_seen_subcommand_from fleet ask wake reply show kill-switch quota call list inbox verify wait events ledger mcp completions help" -f -a "show" -d 'Show the derived state of a discussion'
complete -c discuss -n "__fish_discuss_using_subcommand help; and not __fish_seen_subcommand_from fleet ask wake reply show kill-switch quota call list inbox verify wait events ledger mcp completions help" -f -a "kill-switch" -d 'Engage, release or read the global kill-switch'
complete -c discuss -n "__fish_discuss_using_subcommand help; and not __fish_seen_subcommand_from fleet ask wake reply show kill-switch quota call list inbox verify wait events ledger mcp completions help" -f -a "quota" -d 'Set or show hourly wake quotas'
complete -c discuss -n "__fish_discuss_using_subcommand help; and not __fish_seen_subcommand_from fleet ask wake reply show kill-switch quota call list inbox verify wait events ledger mcp completions help" -f -a "call" -d 'Take one of the seed\'s request objects (ask_peer, wake_agent, reply_discussion, get_discussion) and answer JSON'
complete -c discuss -n "__fish_discuss_using_subcommand help; and not __fish_seen_subcommand_from fleet ask wake reply show kill-switch quota call list inbox verify wait events ledger mcp completions help" -f -a "list" -d 'List discussions, newest first'
complete -c discuss -n "__fish_discuss_using_subcommand help; and not __fish_seen_subcommand_from fleet ask wake reply show kill-switch quota call list inbox verify wait events ledger mcp completions help" -f -a "inbox" -d 'Open discussions whose head is addressed to an agent (reads only)'
complete -c discuss -n "__fish_discuss_using_subcommand help; and not __fish_seen_subcommand_from fleet ask wake reply show kill-switch quota call list inbox verify wait events ledger mcp completions help" -f -a "verify" -d 'Replay the whole ledger and report problems (exit 7 when any)'
complete -c discuss -n "__fish_discuss_using_subcommand help; and not __fish_seen_subcommand_from fleet ask wake reply show kill-switch quota call list inbox verify wait events ledger mcp completions help" -f -a "wait" -d 'Wait until a discussion reaches a status (exit 10 on timeout)'
complete -c discuss -n "__fish_discuss_using_subcommand help; and not __fish_seen_subcommand_from fleet ask wake reply show kill-switch quota call list inbox verify wait events ledger mcp completions help" -f -a "events" -d 'The ledger\'s records in order with each one\'s discussion status; --follow keeps watching (reads only)'
complete -c discuss -n "__fish_discuss_using_subcommand help; and not __fish_seen_subcommand_from fleet ask wake reply show kill-switch quota call list inbox verify wait events ledger mcp completions help" -f -a "ledger" -d 'Export, import or describe the ledger (a file or PostgreSQL)'
complete -c discuss -n "__fish_discuss_using_subcommand help; and not __fish_seen_subcommand_from fleet ask wake reply show kill-switch quota call list inbox verify wait events ledger mcp completions help" -f -a "mcp" -d 'Serve the tools (ask_peer, wake_agent, reply_discussion, get_discussion, list_discussions, inbox) over MCP on stdio'
complete -c discuss -n "__fish_discuss_using_subcommand help; and not __fish_seen_subcommand_from fleet ask wake reply show kill-switch quota call list inbox verify wait events ledger mcp completions help" -f -a "completions" -d 'Print a completion script'
complete -c discuss -n "__fish_discuss_using_subcommand help; and not __fish_seen_subcommand_from fleet ask wake reply show kill-switch quota call list inbox verify wait events ledger mcp completions help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c discuss -n "__fish_discuss_using_subcommand help; and __fish_seen_subcommand_from fleet" -f -a "add" -d 'Add agents to a fleet (creating it); agents already in it are skipped'
complete -c discuss -n "__fish_discuss_using_subcommand help; and __fish_seen_subcommand_from fleet" -f -a "remove" -d 'Remove agents from a fleet; discussions under way are not touched'
complete -c discuss -n "__fish_discuss_using_subcommand help; and __fish_seen_subcommand_from fleet" -f -a "list" -d 'List fleets and their members'
complete -c discuss -n "__fish_discuss_using_subcommand help; and __fish_seen_subcommand_from kill-switch" -f -a "status" -d 'Show whether the switch is engaged (the default)'
complete -c discuss -n "__fish_discuss_using_subcommand help; and __fish_seen_subcommand_from kill-switch" -f -a "on" -d 'Engage the switch'
complete -c discuss -n "__fish_discuss_using_subcommand help; and __fish_seen_subcommand_from kill-switch" -f -a "off" -d 'Release the switch'
complete -c discuss -n "__fish_discuss_using_subcommand help; and __fish_seen_subcommand_from quota" -f -a "set" -d 'Set the quota of one agent, or the default (30 when never set)'
complete -c discuss -n "__fish_discuss_using_subcommand help; and __fish_seen_subcommand_from quota" -f -a "show" -d 'Show the default, each agent\'s quota and its wakes in the last hour'
complete -c discuss -n "__fish_discuss_using_subcommand help; and __fish_seen_subcommand_from ledger" -f -a "export" -d 'Write the ledger\'s complete lines in order, byte for byte'
complete -c discuss -n "__fish_discuss_using_subcommand help; and __fish_seen_subcommand_from ledger" -f -a "import" -d 'Append the lines of a JSON-lines file verbatim, all or nothing'
complete -c discuss -n "__fish_discuss_using_subcommand help; and __fish_seen_subcommand_from ledger" -f -a "info" -d 'Which ledger is in use: kind, location, lines, bytes'
