# shellgate hook for PowerShell 7. Load it from $PROFILE with:
#     Invoke-Expression (& shellgate init powershell | Out-String)
# Interactive sessions: PSConsoleHostReadLine hands every accepted line to `shellgate hook` before
# the host runs it. Exit status 0 = run it here as typed; anything else = it was handled (run in the
# sandbox, or refused), so the host receives an empty line. `pwsh -Command`/`-c` started with a
# profile: the command is run (or refused) by `shellgate run`. `pwsh -NoProfile` reads no profile
# and is not covered (use `shellgate wrap`).
if (-not $global:__ShellgateLoaded -and -not $env:SHELLGATE_ACTIVE) {
    $global:__ShellgateLoaded = $true
    $global:__ShellgateBin = '/path/to/shellgate'

    $__shellgateArgs = [Environment]::GetCommandLineArgs()
    $__shellgateCommand = $null
    for ($i = 1; $i -lt $__shellgateArgs.Length; $i++) {
        $a = $__shellgateArgs[$i].ToLowerInvariant()
        if ($a -in @('-c', '-command', '-co', '-com', '-comm', '-comma', '-comman')) {
            $__shellgateCommand = ($__shellgateArgs[($i + 1)..($__shellgateArgs.Length - 1)] -join ' ')
            break
        }
        if ($a -in @('-e', '-ec', '-encodedcommand', '-f', '-file', '-cwa', '-commandwithargs')) {
            $__shellgateCommand = ($__shellgateArgs[$i..($__shellgateArgs.Length - 1)] -join ' ')
            break
        }
    }
    if ($null -ne $__shellgateCommand) {
        & $global:__ShellgateBin run --shell pwsh --from-hook -- $__shellgateCommand
        [Environment]::Exit($LASTEXITCODE)
    }

    if (Test-Path Function:\PSConsoleHostReadLine) {
        # Every interactive session is a session of its own (Full access ends with it).
        $env:SHELLGATE_SESSION = (& $global:__ShellgateBin new-session)
        $global:__ShellgateReadLine = $function:PSConsoleHostReadLine
        function global:PSConsoleHostReadLine {
            $lastExit = $global:LASTEXITCODE
            $line = & $global:__ShellgateReadLine
            if ([string]::IsNullOrWhiteSpace($line)) { return $line }
            $env:SHELLGATE_LINE = $line
            & $global:__ShellgateBin hook pwsh --line-from-env SHELLGATE_LINE
            $verdict = $LASTEXITCODE
            Remove-Item Env:\SHELLGATE_LINE -ErrorAction SilentlyContinue
            $global:LASTEXITCODE = $lastExit
            if ($verdict -eq 0) { return $line }
            return ''
        }
    }
}