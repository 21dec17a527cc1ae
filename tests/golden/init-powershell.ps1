# shellgate hook for PowerShell 7. Load it from $PROFILE with:
#     Invoke-Expression (& shellgate init powershell | Out-String)
# Interactive sessions: PSConsoleHostReadLine hands every accepted line to `shellgate hook` before
# the host runs it, and the host runs what the wrapper returns: the line as typed when it runs in
# the session itself (it only changes the session's state, or Full access is confirmed), else a
# call that sets $LASTEXITCODE to the line's status (it ran in the sandbox) or to its refusal's
# status (200-range). The hook writes what became of the line to a file in the session's private
# directory (`shell`, `ran N`, `refused N`); without one, the line is not run (219).
# `pwsh -Command`/`-c` started with a profile: the command is run (or refused) by `shellgate run`.
# `pwsh -NoProfile` reads no profile and is not covered (use `shellgate wrap`).
# Untested live: PowerShell cannot be installed on shellgate's CI machines (see
# docs/shell-integration.md); the template is checked by a parser and a golden file.
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
        $__shellgateDir = (& $global:__ShellgateBin hook pwsh --prepare --pid $PID)
        $global:__ShellgateStatusFile = if ($__shellgateDir) { Join-Path $__shellgateDir 'status' } else { $null }
        $global:__ShellgateReadLine = $function:PSConsoleHostReadLine

        # What the host runs for a line that ran in the sandbox or was refused: its status.
        function global:__ShellgateStatus([int]$Code) {
            $global:LASTEXITCODE = $Code
        }

        function global:PSConsoleHostReadLine {
            $lastExit = $global:LASTEXITCODE
            $line = & $global:__ShellgateReadLine
            if ([string]::IsNullOrWhiteSpace($line)) { return $line }
            if ($null -eq $global:__ShellgateStatusFile) { return '__ShellgateStatus 219' }
            $env:SHELLGATE_LINE = $line
            & $global:__ShellgateBin hook pwsh --line-from-env SHELLGATE_LINE --status-file $global:__ShellgateStatusFile
            Remove-Item Env:\SHELLGATE_LINE -ErrorAction SilentlyContinue
            $global:LASTEXITCODE = $lastExit
            $outcome = Get-Content -LiteralPath $global:__ShellgateStatusFile -ErrorAction SilentlyContinue
            if ($outcome -eq 'shell') { return $line }
            $code = 219
            if ("$outcome" -match '^(ran|refused) (\d+)$') { $code = [int]$Matches[2] }
            return "__ShellgateStatus $code"
        }
    }
}