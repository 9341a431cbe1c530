
Register-ArgumentCompleter -Native -CommandName discuss -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $prev = $env:DISCUSS_COMPLETE;
    $env:DISCUSS_COMPLETE = "powershell";

    $args = $commandAst.Extent.Text
    $args = $args.Substring(0, [math]::Min($cursorPosition, $args.Length));
    if ($wordToComplete -eq "") {
        $args += " ''";
    }

    $results = Invoke-Expression @"
& discuss -- $args
"@;
    if ($null -eq $prev) {
        Remove-Item Env:\DISCUSS_COMPLETE;
    } else {
        $env:DISCUSS_COMPLETE = $prev;
    }
    $results | ForEach-Object {
        $split = $_.Split("`t");
        $cmd = $split[0];

        if ($split.Length -eq 2) {
            $help = $split[1];
        }
        else {
            $help = $split[0];
        }

        [System.Management.Automation.CompletionResult]::new($cmd, $cmd, 'ParameterValue', $help)
    }
};
        
