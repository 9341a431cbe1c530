
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'discuss' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'discuss'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'discuss' {
            [CompletionResult]::new('--ledger', '--ledger', [CompletionResultType]::ParameterName, 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]')
            [CompletionResult]::new('--actor', '--actor', [CompletionResultType]::ParameterName, 'Recorded as `by` on every record written [default: the OS user name]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (never with --json; NO_COLOR turns auto off)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print exactly one JSON object on stdout (errors: one on stderr)')
            [CompletionResult]::new('--allow-network-fs', '--allow-network-fs', [CompletionResultType]::ParameterName, 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('fleet', 'fleet', [CompletionResultType]::ParameterValue, 'Register agents in fleets, remove them, list fleets')
            [CompletionResult]::new('ask', 'ask', [CompletionResultType]::ParameterValue, 'Start a discussion: the root message from one agent to its peer')
            [CompletionResult]::new('wake', 'wake', [CompletionResultType]::ParameterValue, 'Reserve one budgeted turn for the recipient of the head')
            [CompletionResult]::new('reply', 'reply', [CompletionResultType]::ParameterValue, 'Answer within a reserved turn (a question or a result)')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Show the derived state of a discussion')
            [CompletionResult]::new('kill-switch', 'kill-switch', [CompletionResultType]::ParameterValue, 'Engage, release or read the global kill-switch')
            [CompletionResult]::new('quota', 'quota', [CompletionResultType]::ParameterValue, 'Set or show hourly wake quotas')
            [CompletionResult]::new('call', 'call', [CompletionResultType]::ParameterValue, 'Take one of the seed''s request objects (ask_peer, wake_agent, reply_discussion, get_discussion) and answer JSON')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List discussions, newest first')
            [CompletionResult]::new('inbox', 'inbox', [CompletionResultType]::ParameterValue, 'Open discussions whose head is addressed to an agent (reads only)')
            [CompletionResult]::new('verify', 'verify', [CompletionResultType]::ParameterValue, 'Replay the whole ledger and report problems (exit 7 when any)')
            [CompletionResult]::new('wait', 'wait', [CompletionResultType]::ParameterValue, 'Wait until a discussion reaches a status (exit 10 on timeout)')
            [CompletionResult]::new('events', 'events', [CompletionResultType]::ParameterValue, 'The ledger''s records in order with each one''s discussion status; --follow keeps watching (reads only)')
            [CompletionResult]::new('ledger', 'ledger', [CompletionResultType]::ParameterValue, 'Export, import or describe the ledger (a file or PostgreSQL)')
            [CompletionResult]::new('mcp', 'mcp', [CompletionResultType]::ParameterValue, 'Serve the tools (ask_peer, wake_agent, reply_discussion, get_discussion, list_discussions, inbox) over MCP on stdio')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print a completion script')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'discuss;fleet' {
            [CompletionResult]::new('--ledger', '--ledger', [CompletionResultType]::ParameterName, 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]')
            [CompletionResult]::new('--actor', '--actor', [CompletionResultType]::ParameterName, 'Recorded as `by` on every record written [default: the OS user name]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (never with --json; NO_COLOR turns auto off)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print exactly one JSON object on stdout (errors: one on stderr)')
            [CompletionResult]::new('--allow-network-fs', '--allow-network-fs', [CompletionResultType]::ParameterName, 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('add', 'add', [CompletionResultType]::ParameterValue, 'Add agents to a fleet (creating it); agents already in it are skipped')
            [CompletionResult]::new('remove', 'remove', [CompletionResultType]::ParameterValue, 'Remove agents from a fleet; discussions under way are not touched')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List fleets and their members')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'discuss;fleet;add' {
            [CompletionResult]::new('--ledger', '--ledger', [CompletionResultType]::ParameterName, 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]')
            [CompletionResult]::new('--actor', '--actor', [CompletionResultType]::ParameterName, 'Recorded as `by` on every record written [default: the OS user name]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (never with --json; NO_COLOR turns auto off)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print exactly one JSON object on stdout (errors: one on stderr)')
            [CompletionResult]::new('--allow-network-fs', '--allow-network-fs', [CompletionResultType]::ParameterName, 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'discuss;fleet;remove' {
            [CompletionResult]::new('--ledger', '--ledger', [CompletionResultType]::ParameterName, 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]')
            [CompletionResult]::new('--actor', '--actor', [CompletionResultType]::ParameterName, 'Recorded as `by` on every record written [default: the OS user name]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (never with --json; NO_COLOR turns auto off)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print exactly one JSON object on stdout (errors: one on stderr)')
            [CompletionResult]::new('--allow-network-fs', '--allow-network-fs', [CompletionResultType]::ParameterName, 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'discuss;fleet;list' {
            [CompletionResult]::new('--ledger', '--ledger', [CompletionResultType]::ParameterName, 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]')
            [CompletionResult]::new('--actor', '--actor', [CompletionResultType]::ParameterName, 'Recorded as `by` on every record written [default: the OS user name]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (never with --json; NO_COLOR turns auto off)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print exactly one JSON object on stdout (errors: one on stderr)')
            [CompletionResult]::new('--allow-network-fs', '--allow-network-fs', [CompletionResultType]::ParameterName, 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'discuss;fleet;help' {
            [CompletionResult]::new('add', 'add', [CompletionResultType]::ParameterValue, 'Add agents to a fleet (creating it); agents already in it are skipped')
            [CompletionResult]::new('remove', 'remove', [CompletionResultType]::ParameterValue, 'Remove agents from a fleet; discussions under way are not touched')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List fleets and their members')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'discuss;fleet;help;add' {
            break
        }
        'discuss;fleet;help;remove' {
            break
        }
        'discuss;fleet;help;list' {
            break
        }
        'discuss;fleet;help;help' {
            break
        }
        'discuss;ask' {
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'The asking agent')
            [CompletionResult]::new('--to', '--to', [CompletionResultType]::ParameterName, 'The peer (exactly one: group discussions are refused)')
            [CompletionResult]::new('--fleet', '--fleet', [CompletionResultType]::ParameterName, 'The fleet both agents belong to')
            [CompletionResult]::new('--payload', '--payload', [CompletionResultType]::ParameterName, 'The message body as JSON (any JSON value)')
            [CompletionResult]::new('--payload-file', '--payload-file', [CompletionResultType]::ParameterName, 'Read the JSON body from a file, or from stdin with `-`')
            [CompletionResult]::new('--max-turns', '--max-turns', [CompletionResultType]::ParameterName, 'Turn budget, the root included (2 to 32)')
            [CompletionResult]::new('--timeout-ms', '--timeout-ms', [CompletionResultType]::ParameterName, 'Conversation deadline after the root, in ms (1000 to 900000)')
            [CompletionResult]::new('--turn-timeout-ms', '--turn-timeout-ms', [CompletionResultType]::ParameterName, 'Deadline of each turn, in ms (1000 to 300000, at most --timeout-ms)')
            [CompletionResult]::new('--idempotency-key', '--idempotency-key', [CompletionResultType]::ParameterName, 'Makes the write safe to retry: the same key with the same arguments answers the original result ("replayed": true) and writes nothing; with other arguments it is refused (idempotency_conflict)')
            [CompletionResult]::new('--kill-grace-ms', '--kill-grace-ms', [CompletionResultType]::ParameterName, 'Grace period between SIGTERM and SIGKILL of a supervised run, in ms')
            [CompletionResult]::new('--env', '--env', [CompletionResultType]::ParameterName, 'With --clean-env: also pass this variable on (repeatable)')
            [CompletionResult]::new('--ledger', '--ledger', [CompletionResultType]::ParameterName, 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]')
            [CompletionResult]::new('--actor', '--actor', [CompletionResultType]::ParameterName, 'Recorded as `by` on every record written [default: the OS user name]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (never with --json; NO_COLOR turns auto off)')
            [CompletionResult]::new('--wake-peer', '--wake-peer', [CompletionResultType]::ParameterName, 'Reserve the peer''s first turn in the same atomic write')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only the ids (the new discussion, the new attempt, or one listed discussion a line), also with --json')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only the ids (the new discussion, the new attempt, or one listed discussion a line), also with --json')
            [CompletionResult]::new('--reply-from-stdout', '--reply-from-stdout', [CompletionResultType]::ParameterName, 'Capture the command''s stdout; if it exits 0 without replying, post the output as a `result` reply (JSON body when it is JSON, else {"text": ...})')
            [CompletionResult]::new('--close-on-reply', '--close-on-reply', [CompletionResultType]::ParameterName, 'With --reply-from-stdout: close the discussion with that reply')
            [CompletionResult]::new('--clean-env', '--clean-env', [CompletionResultType]::ParameterName, 'Start the command with only PATH, HOME, LANG, TERM, the DISCUSS_* variables and those named by --env, instead of this whole environment')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print exactly one JSON object on stdout (errors: one on stderr)')
            [CompletionResult]::new('--allow-network-fs', '--allow-network-fs', [CompletionResultType]::ParameterName, 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'discuss;wake' {
            [CompletionResult]::new('--agent', '--agent', [CompletionResultType]::ParameterName, 'The agent to wake: the recipient of the head')
            [CompletionResult]::new('--discussion', '--discussion', [CompletionResultType]::ParameterName, 'The discussion')
            [CompletionResult]::new('--expected-head', '--expected-head', [CompletionResultType]::ParameterName, 'The head message the caller saw; refused as stale_head if it moved')
            [CompletionResult]::new('--idempotency-key', '--idempotency-key', [CompletionResultType]::ParameterName, 'Makes the write safe to retry: the same key with the same arguments answers the original result ("replayed": true) and writes nothing; with other arguments it is refused (idempotency_conflict)')
            [CompletionResult]::new('--kill-grace-ms', '--kill-grace-ms', [CompletionResultType]::ParameterName, 'Grace period between SIGTERM and SIGKILL of a supervised run, in ms')
            [CompletionResult]::new('--env', '--env', [CompletionResultType]::ParameterName, 'With --clean-env: also pass this variable on (repeatable)')
            [CompletionResult]::new('--ledger', '--ledger', [CompletionResultType]::ParameterName, 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]')
            [CompletionResult]::new('--actor', '--actor', [CompletionResultType]::ParameterName, 'Recorded as `by` on every record written [default: the OS user name]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (never with --json; NO_COLOR turns auto off)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only the ids (the new discussion, the new attempt, or one listed discussion a line), also with --json')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only the ids (the new discussion, the new attempt, or one listed discussion a line), also with --json')
            [CompletionResult]::new('--reply-from-stdout', '--reply-from-stdout', [CompletionResultType]::ParameterName, 'Capture the command''s stdout; if it exits 0 without replying, post the output as a `result` reply (JSON body when it is JSON, else {"text": ...})')
            [CompletionResult]::new('--close-on-reply', '--close-on-reply', [CompletionResultType]::ParameterName, 'With --reply-from-stdout: close the discussion with that reply')
            [CompletionResult]::new('--clean-env', '--clean-env', [CompletionResultType]::ParameterName, 'Start the command with only PATH, HOME, LANG, TERM, the DISCUSS_* variables and those named by --env, instead of this whole environment')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print exactly one JSON object on stdout (errors: one on stderr)')
            [CompletionResult]::new('--allow-network-fs', '--allow-network-fs', [CompletionResultType]::ParameterName, 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'discuss;reply' {
            [CompletionResult]::new('--agent', '--agent', [CompletionResultType]::ParameterName, 'The woken agent')
            [CompletionResult]::new('--discussion', '--discussion', [CompletionResultType]::ParameterName, 'The discussion')
            [CompletionResult]::new('--attempt', '--attempt', [CompletionResultType]::ParameterName, 'The attempt `wake` reserved')
            [CompletionResult]::new('--reply-to', '--reply-to', [CompletionResultType]::ParameterName, 'The head message being answered')
            [CompletionResult]::new('--type', '--type', [CompletionResultType]::ParameterName, 'A question back to the other agent, or a result')
            [CompletionResult]::new('--payload', '--payload', [CompletionResultType]::ParameterName, 'The message body as JSON (any JSON value)')
            [CompletionResult]::new('--payload-file', '--payload-file', [CompletionResultType]::ParameterName, 'Read the JSON body from a file, or from stdin with `-`')
            [CompletionResult]::new('--idempotency-key', '--idempotency-key', [CompletionResultType]::ParameterName, 'Makes the write safe to retry: the same key with the same arguments answers the original result ("replayed": true) and writes nothing; with other arguments it is refused (idempotency_conflict)')
            [CompletionResult]::new('--ledger', '--ledger', [CompletionResultType]::ParameterName, 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]')
            [CompletionResult]::new('--actor', '--actor', [CompletionResultType]::ParameterName, 'Recorded as `by` on every record written [default: the OS user name]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (never with --json; NO_COLOR turns auto off)')
            [CompletionResult]::new('--close', '--close', [CompletionResultType]::ParameterName, 'End the discussion with this reply')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print exactly one JSON object on stdout (errors: one on stderr)')
            [CompletionResult]::new('--allow-network-fs', '--allow-network-fs', [CompletionResultType]::ParameterName, 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'discuss;show' {
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Human output as a terminal table, or a Markdown document with every body whole (--json prints the contract''s object)')
            [CompletionResult]::new('--ledger', '--ledger', [CompletionResultType]::ParameterName, 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]')
            [CompletionResult]::new('--actor', '--actor', [CompletionResultType]::ParameterName, 'Recorded as `by` on every record written [default: the OS user name]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (never with --json; NO_COLOR turns auto off)')
            [CompletionResult]::new('--no-receipts', '--no-receipts', [CompletionResultType]::ParameterName, 'Leave out the receipts of each transcript entry')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print exactly one JSON object on stdout (errors: one on stderr)')
            [CompletionResult]::new('--allow-network-fs', '--allow-network-fs', [CompletionResultType]::ParameterName, 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'discuss;kill-switch' {
            [CompletionResult]::new('--ledger', '--ledger', [CompletionResultType]::ParameterName, 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]')
            [CompletionResult]::new('--actor', '--actor', [CompletionResultType]::ParameterName, 'Recorded as `by` on every record written [default: the OS user name]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (never with --json; NO_COLOR turns auto off)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print exactly one JSON object on stdout (errors: one on stderr)')
            [CompletionResult]::new('--allow-network-fs', '--allow-network-fs', [CompletionResultType]::ParameterName, 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Show whether the switch is engaged (the default)')
            [CompletionResult]::new('on', 'on', [CompletionResultType]::ParameterValue, 'Engage the switch')
            [CompletionResult]::new('off', 'off', [CompletionResultType]::ParameterValue, 'Release the switch')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'discuss;kill-switch;status' {
            [CompletionResult]::new('--ledger', '--ledger', [CompletionResultType]::ParameterName, 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]')
            [CompletionResult]::new('--actor', '--actor', [CompletionResultType]::ParameterName, 'Recorded as `by` on every record written [default: the OS user name]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (never with --json; NO_COLOR turns auto off)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print exactly one JSON object on stdout (errors: one on stderr)')
            [CompletionResult]::new('--allow-network-fs', '--allow-network-fs', [CompletionResultType]::ParameterName, 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'discuss;kill-switch;on' {
            [CompletionResult]::new('--reason', '--reason', [CompletionResultType]::ParameterName, 'Why; shown to everyone who is refused')
            [CompletionResult]::new('--ledger', '--ledger', [CompletionResultType]::ParameterName, 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]')
            [CompletionResult]::new('--actor', '--actor', [CompletionResultType]::ParameterName, 'Recorded as `by` on every record written [default: the OS user name]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (never with --json; NO_COLOR turns auto off)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print exactly one JSON object on stdout (errors: one on stderr)')
            [CompletionResult]::new('--allow-network-fs', '--allow-network-fs', [CompletionResultType]::ParameterName, 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'discuss;kill-switch;off' {
            [CompletionResult]::new('--ledger', '--ledger', [CompletionResultType]::ParameterName, 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]')
            [CompletionResult]::new('--actor', '--actor', [CompletionResultType]::ParameterName, 'Recorded as `by` on every record written [default: the OS user name]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (never with --json; NO_COLOR turns auto off)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print exactly one JSON object on stdout (errors: one on stderr)')
            [CompletionResult]::new('--allow-network-fs', '--allow-network-fs', [CompletionResultType]::ParameterName, 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'discuss;kill-switch;help' {
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Show whether the switch is engaged (the default)')
            [CompletionResult]::new('on', 'on', [CompletionResultType]::ParameterValue, 'Engage the switch')
            [CompletionResult]::new('off', 'off', [CompletionResultType]::ParameterValue, 'Release the switch')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'discuss;kill-switch;help;status' {
            break
        }
        'discuss;kill-switch;help;on' {
            break
        }
        'discuss;kill-switch;help;off' {
            break
        }
        'discuss;kill-switch;help;help' {
            break
        }
        'discuss;quota' {
            [CompletionResult]::new('--ledger', '--ledger', [CompletionResultType]::ParameterName, 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]')
            [CompletionResult]::new('--actor', '--actor', [CompletionResultType]::ParameterName, 'Recorded as `by` on every record written [default: the OS user name]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (never with --json; NO_COLOR turns auto off)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print exactly one JSON object on stdout (errors: one on stderr)')
            [CompletionResult]::new('--allow-network-fs', '--allow-network-fs', [CompletionResultType]::ParameterName, 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('set', 'set', [CompletionResultType]::ParameterValue, 'Set the quota of one agent, or the default (30 when never set)')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Show the default, each agent''s quota and its wakes in the last hour')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'discuss;quota;set' {
            [CompletionResult]::new('--agent', '--agent', [CompletionResultType]::ParameterName, 'The agent; without it, the default is set')
            [CompletionResult]::new('--ledger', '--ledger', [CompletionResultType]::ParameterName, 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]')
            [CompletionResult]::new('--actor', '--actor', [CompletionResultType]::ParameterName, 'Recorded as `by` on every record written [default: the OS user name]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (never with --json; NO_COLOR turns auto off)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print exactly one JSON object on stdout (errors: one on stderr)')
            [CompletionResult]::new('--allow-network-fs', '--allow-network-fs', [CompletionResultType]::ParameterName, 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'discuss;quota;show' {
            [CompletionResult]::new('--ledger', '--ledger', [CompletionResultType]::ParameterName, 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]')
            [CompletionResult]::new('--actor', '--actor', [CompletionResultType]::ParameterName, 'Recorded as `by` on every record written [default: the OS user name]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (never with --json; NO_COLOR turns auto off)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print exactly one JSON object on stdout (errors: one on stderr)')
            [CompletionResult]::new('--allow-network-fs', '--allow-network-fs', [CompletionResultType]::ParameterName, 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'discuss;quota;help' {
            [CompletionResult]::new('set', 'set', [CompletionResultType]::ParameterValue, 'Set the quota of one agent, or the default (30 when never set)')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Show the default, each agent''s quota and its wakes in the last hour')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'discuss;quota;help;set' {
            break
        }
        'discuss;quota;help;show' {
            break
        }
        'discuss;quota;help;help' {
            break
        }
        'discuss;call' {
            [CompletionResult]::new('--ledger', '--ledger', [CompletionResultType]::ParameterName, 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]')
            [CompletionResult]::new('--actor', '--actor', [CompletionResultType]::ParameterName, 'Recorded as `by` on every record written [default: the OS user name]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (never with --json; NO_COLOR turns auto off)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print exactly one JSON object on stdout (errors: one on stderr)')
            [CompletionResult]::new('--allow-network-fs', '--allow-network-fs', [CompletionResultType]::ParameterName, 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'discuss;list' {
            [CompletionResult]::new('--status', '--status', [CompletionResultType]::ParameterName, 'Only these statuses (repeatable or comma-separated; `terminal` for closed, deadman, expired, exhausted and invalid)')
            [CompletionResult]::new('--agent', '--agent', [CompletionResultType]::ParameterName, 'Only discussions this agent takes part in')
            [CompletionResult]::new('--fleet', '--fleet', [CompletionResultType]::ParameterName, 'Only discussions of this fleet')
            [CompletionResult]::new('--ledger', '--ledger', [CompletionResultType]::ParameterName, 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]')
            [CompletionResult]::new('--actor', '--actor', [CompletionResultType]::ParameterName, 'Recorded as `by` on every record written [default: the OS user name]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (never with --json; NO_COLOR turns auto off)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only the ids (the new discussion, the new attempt, or one listed discussion a line), also with --json')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only the ids (the new discussion, the new attempt, or one listed discussion a line), also with --json')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print exactly one JSON object on stdout (errors: one on stderr)')
            [CompletionResult]::new('--allow-network-fs', '--allow-network-fs', [CompletionResultType]::ParameterName, 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'discuss;inbox' {
            [CompletionResult]::new('--agent', '--agent', [CompletionResultType]::ParameterName, 'The agent')
            [CompletionResult]::new('--ledger', '--ledger', [CompletionResultType]::ParameterName, 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]')
            [CompletionResult]::new('--actor', '--actor', [CompletionResultType]::ParameterName, 'Recorded as `by` on every record written [default: the OS user name]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (never with --json; NO_COLOR turns auto off)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only the ids (the new discussion, the new attempt, or one listed discussion a line), also with --json')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only the ids (the new discussion, the new attempt, or one listed discussion a line), also with --json')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print exactly one JSON object on stdout (errors: one on stderr)')
            [CompletionResult]::new('--allow-network-fs', '--allow-network-fs', [CompletionResultType]::ParameterName, 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'discuss;verify' {
            [CompletionResult]::new('--ledger', '--ledger', [CompletionResultType]::ParameterName, 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]')
            [CompletionResult]::new('--actor', '--actor', [CompletionResultType]::ParameterName, 'Recorded as `by` on every record written [default: the OS user name]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (never with --json; NO_COLOR turns auto off)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print exactly one JSON object on stdout (errors: one on stderr)')
            [CompletionResult]::new('--allow-network-fs', '--allow-network-fs', [CompletionResultType]::ParameterName, 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'discuss;wait' {
            [CompletionResult]::new('--until', '--until', [CompletionResultType]::ParameterName, 'Statuses to wait for (comma-separated; `terminal` for any terminal one)')
            [CompletionResult]::new('--timeout-ms', '--timeout-ms', [CompletionResultType]::ParameterName, 'Give up after this many ms (default: wait as long as it takes)')
            [CompletionResult]::new('--ledger', '--ledger', [CompletionResultType]::ParameterName, 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]')
            [CompletionResult]::new('--actor', '--actor', [CompletionResultType]::ParameterName, 'Recorded as `by` on every record written [default: the OS user name]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (never with --json; NO_COLOR turns auto off)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print exactly one JSON object on stdout (errors: one on stderr)')
            [CompletionResult]::new('--allow-network-fs', '--allow-network-fs', [CompletionResultType]::ParameterName, 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'discuss;events' {
            [CompletionResult]::new('--discussion', '--discussion', [CompletionResultType]::ParameterName, 'Only the records of this discussion')
            [CompletionResult]::new('--agent', '--agent', [CompletionResultType]::ParameterName, 'Only the records of discussions this agent takes part in')
            [CompletionResult]::new('--ledger', '--ledger', [CompletionResultType]::ParameterName, 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]')
            [CompletionResult]::new('--actor', '--actor', [CompletionResultType]::ParameterName, 'Recorded as `by` on every record written [default: the OS user name]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (never with --json; NO_COLOR turns auto off)')
            [CompletionResult]::new('--follow', '--follow', [CompletionResultType]::ParameterName, 'Keep watching and print records as they are written')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print exactly one JSON object on stdout (errors: one on stderr)')
            [CompletionResult]::new('--allow-network-fs', '--allow-network-fs', [CompletionResultType]::ParameterName, 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'discuss;ledger' {
            [CompletionResult]::new('--ledger', '--ledger', [CompletionResultType]::ParameterName, 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]')
            [CompletionResult]::new('--actor', '--actor', [CompletionResultType]::ParameterName, 'Recorded as `by` on every record written [default: the OS user name]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (never with --json; NO_COLOR turns auto off)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print exactly one JSON object on stdout (errors: one on stderr)')
            [CompletionResult]::new('--allow-network-fs', '--allow-network-fs', [CompletionResultType]::ParameterName, 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('export', 'export', [CompletionResultType]::ParameterValue, 'Write the ledger''s complete lines in order, byte for byte')
            [CompletionResult]::new('import', 'import', [CompletionResultType]::ParameterValue, 'Append the lines of a JSON-lines file verbatim, all or nothing')
            [CompletionResult]::new('info', 'info', [CompletionResultType]::ParameterValue, 'Which ledger is in use: kind, location, lines, bytes')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'discuss;ledger;export' {
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Write to this file (replaced whole, atomically) instead of stdout')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Write to this file (replaced whole, atomically) instead of stdout')
            [CompletionResult]::new('--ledger', '--ledger', [CompletionResultType]::ParameterName, 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]')
            [CompletionResult]::new('--actor', '--actor', [CompletionResultType]::ParameterName, 'Recorded as `by` on every record written [default: the OS user name]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (never with --json; NO_COLOR turns auto off)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print exactly one JSON object on stdout (errors: one on stderr)')
            [CompletionResult]::new('--allow-network-fs', '--allow-network-fs', [CompletionResultType]::ParameterName, 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'discuss;ledger;import' {
            [CompletionResult]::new('--ledger', '--ledger', [CompletionResultType]::ParameterName, 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]')
            [CompletionResult]::new('--actor', '--actor', [CompletionResultType]::ParameterName, 'Recorded as `by` on every record written [default: the OS user name]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (never with --json; NO_COLOR turns auto off)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print exactly one JSON object on stdout (errors: one on stderr)')
            [CompletionResult]::new('--allow-network-fs', '--allow-network-fs', [CompletionResultType]::ParameterName, 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'discuss;ledger;info' {
            [CompletionResult]::new('--ledger', '--ledger', [CompletionResultType]::ParameterName, 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]')
            [CompletionResult]::new('--actor', '--actor', [CompletionResultType]::ParameterName, 'Recorded as `by` on every record written [default: the OS user name]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (never with --json; NO_COLOR turns auto off)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print exactly one JSON object on stdout (errors: one on stderr)')
            [CompletionResult]::new('--allow-network-fs', '--allow-network-fs', [CompletionResultType]::ParameterName, 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'discuss;ledger;help' {
            [CompletionResult]::new('export', 'export', [CompletionResultType]::ParameterValue, 'Write the ledger''s complete lines in order, byte for byte')
            [CompletionResult]::new('import', 'import', [CompletionResultType]::ParameterValue, 'Append the lines of a JSON-lines file verbatim, all or nothing')
            [CompletionResult]::new('info', 'info', [CompletionResultType]::ParameterValue, 'Which ledger is in use: kind, location, lines, bytes')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'discuss;ledger;help;export' {
            break
        }
        'discuss;ledger;help;import' {
            break
        }
        'discuss;ledger;help;info' {
            break
        }
        'discuss;ledger;help;help' {
            break
        }
        'discuss;mcp' {
            [CompletionResult]::new('--agent', '--agent', [CompletionResultType]::ParameterName, 'Act for this agent only: ask_peer.from_agent_id and reply_discussion.agent_id must be it (agent_mismatch otherwise)')
            [CompletionResult]::new('--ledger', '--ledger', [CompletionResultType]::ParameterName, 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]')
            [CompletionResult]::new('--actor', '--actor', [CompletionResultType]::ParameterName, 'Recorded as `by` on every record written [default: the OS user name]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (never with --json; NO_COLOR turns auto off)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print exactly one JSON object on stdout (errors: one on stderr)')
            [CompletionResult]::new('--allow-network-fs', '--allow-network-fs', [CompletionResultType]::ParameterName, 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'discuss;completions' {
            [CompletionResult]::new('--ledger', '--ledger', [CompletionResultType]::ParameterName, 'The ledger: a file (created on first write) or a PostgreSQL database given as a postgresql:// URL [default: $XDG_STATE_HOME/discuss/ledger.jsonl, else ~/.local/state/discuss/ledger.jsonl]')
            [CompletionResult]::new('--actor', '--actor', [CompletionResultType]::ParameterName, 'Recorded as `by` on every record written [default: the OS user name]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (never with --json; NO_COLOR turns auto off)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print exactly one JSON object on stdout (errors: one on stderr)')
            [CompletionResult]::new('--allow-network-fs', '--allow-network-fs', [CompletionResultType]::ParameterName, 'Open a ledger on a network filesystem (NFS, SMB...) although its locks and appends are not reliable there')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'discuss;help' {
            [CompletionResult]::new('fleet', 'fleet', [CompletionResultType]::ParameterValue, 'Register agents in fleets, remove them, list fleets')
            [CompletionResult]::new('ask', 'ask', [CompletionResultType]::ParameterValue, 'Start a discussion: the root message from one agent to its peer')
            [CompletionResult]::new('wake', 'wake', [CompletionResultType]::ParameterValue, 'Reserve one budgeted turn for the recipient of the head')
            [CompletionResult]::new('reply', 'reply', [CompletionResultType]::ParameterValue, 'Answer within a reserved turn (a question or a result)')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Show the derived state of a discussion')
            [CompletionResult]::new('kill-switch', 'kill-switch', [CompletionResultType]::ParameterValue, 'Engage, release or read the global kill-switch')
            [CompletionResult]::new('quota', 'quota', [CompletionResultType]::ParameterValue, 'Set or show hourly wake quotas')
            [CompletionResult]::new('call', 'call', [CompletionResultType]::ParameterValue, 'Take one of the seed''s request objects (ask_peer, wake_agent, reply_discussion, get_discussion) and answer JSON')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List discussions, newest first')
            [CompletionResult]::new('inbox', 'inbox', [CompletionResultType]::ParameterValue, 'Open discussions whose head is addressed to an agent (reads only)')
            [CompletionResult]::new('verify', 'verify', [CompletionResultType]::ParameterValue, 'Replay the whole ledger and report problems (exit 7 when any)')
            [CompletionResult]::new('wait', 'wait', [CompletionResultType]::ParameterValue, 'Wait until a discussion reaches a status (exit 10 on timeout)')
            [CompletionResult]::new('events', 'events', [CompletionResultType]::ParameterValue, 'The ledger''s records in order with each one''s discussion status; --follow keeps watching (reads only)')
            [CompletionResult]::new('ledger', 'ledger', [CompletionResultType]::ParameterValue, 'Export, import or describe the ledger (a file or PostgreSQL)')
            [CompletionResult]::new('mcp', 'mcp', [CompletionResultType]::ParameterValue, 'Serve the tools (ask_peer, wake_agent, reply_discussion, get_discussion, list_discussions, inbox) over MCP on stdio')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print a completion script')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'discuss;help;fleet' {
            [CompletionResult]::new('add', 'add', [CompletionResultType]::ParameterValue, 'Add agents to a fleet (creating it); agents already in it are skipped')
            [CompletionResult]::new('remove', 'remove', [CompletionResultType]::ParameterValue, 'Remove agents from a fleet; discussions under way are not touched')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List fleets and their members')
            break
        }
        'discuss;help;fleet;add' {
            break
        }
        'discuss;help;fleet;remove' {
            break
        }
        'discuss;help;fleet;list' {
            break
        }
        'discuss;help;ask' {
            break
        }
        'discuss;help;wake' {
            break
        }
        'discuss;help;reply' {
            break
        }
        'discuss;help;show' {
            break
        }
        'discuss;help;kill-switch' {
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Show whether the switch is engaged (the default)')
            [CompletionResult]::new('on', 'on', [CompletionResultType]::ParameterValue, 'Engage the switch')
            [CompletionResult]::new('off', 'off', [CompletionResultType]::ParameterValue, 'Release the switch')
            break
        }
        'discuss;help;kill-switch;status' {
            break
        }
        'discuss;help;kill-switch;on' {
            break
        }
        'discuss;help;kill-switch;off' {
            break
        }
        'discuss;help;quota' {
            [CompletionResult]::new('set', 'set', [CompletionResultType]::ParameterValue, 'Set the quota of one agent, or the default (30 when never set)')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Show the default, each agent''s quota and its wakes in the last hour')
            break
        }
        'discuss;help;quota;set' {
            break
        }
        'discuss;help;quota;show' {
            break
        }
        'discuss;help;call' {
            break
        }
        'discuss;help;list' {
            break
        }
        'discuss;help;inbox' {
            break
        }
        'discuss;help;verify' {
            break
        }
        'discuss;help;wait' {
            break
        }
        'discuss;help;events' {
            break
        }
        'discuss;help;ledger' {
            [CompletionResult]::new('export', 'export', [CompletionResultType]::ParameterValue, 'Write the ledger''s complete lines in order, byte for byte')
            [CompletionResult]::new('import', 'import', [CompletionResultType]::ParameterValue, 'Append the lines of a JSON-lines file verbatim, all or nothing')
            [CompletionResult]::new('info', 'info', [CompletionResultType]::ParameterValue, 'Which ledger is in use: kind, location, lines, bytes')
            break
        }
        'discuss;help;ledger;export' {
            break
        }
        'discuss;help;ledger;import' {
            break
        }
        'discuss;help;ledger;info' {
            break
        }
        'discuss;help;mcp' {
            break
        }
        'discuss;help;completions' {
            break
        }
        'discuss;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
