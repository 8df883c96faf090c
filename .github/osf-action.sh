#!/usr/bin/env bash
# The shell step of the pytest-osfoundry GitHub Action (action.yml at the repository root).
#
# Installs the kit from the action's own checkout, runs the conformance suite strict
# (a check that cannot run fails the gate), appends the Markdown report to the job
# summary and leaves the JSON and JUnit reports in the output folder for an upload
# step. Exits with pytest's status: 0 all good, 1 a check failed, 4 a configuration
# error (one message naming the option). The kit's own tests run this script against
# `embedded` with a fake GITHUB_STEP_SUMMARY, so it can run outside GitHub too.
#
# Inputs (environment): OSF_ACTION_TARGET, OSF_ACTION_RELAY_COMMAND or
# OSF_ACTION_AGENT_COMMAND (one is required: a command is run from the calling
# repository's root), OSF_ACTION_AGENT_TOKEN,
# OSF_ACTION_OTHER_AGENT_TOKEN, OSF_ACTION_READ_TOKEN, OSF_ACTION_DESKTOP_TOKEN,
# OSF_ACTION_PROJECT_ID, OSF_ACTION_STRANGER_TOKEN, OSF_ACTION_STRANGER_DESKTOP_TOKEN,
# OSF_ACTION_STRANGER_PROJECT_ID, OSF_ACTION_RELAY_URL, OSF_ACTION_BASELINE,
# OSF_ACTION_LEVEL (documented|all), OSF_ACTION_OUTPUT_DIR (default osf-results),
# OSF_ACTION_PATH (the kit's checkout; default: this script's repository),
# OSF_ACTION_PYTHON (default python3), OSF_ACTION_INSTALL (default true),
# OSF_ACTION_AGENT_REALTIME and OSF_ACTION_AGENT_RESTART ('true' or 'false'/empty).
set -uo pipefail

fail() { echo "osf-action: $*" >&2; exit 4; }

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
kit="${OSF_ACTION_PATH:-$here}"
python="${OSF_ACTION_PYTHON:-python3}"
[ -n "${OSF_ACTION_TARGET:-}" ] || [ -n "${OSF_ACTION_RELAY_COMMAND:-}" ] \
    || [ -n "${OSF_ACTION_AGENT_COMMAND:-}" ] \
    || fail "the 'target' input is empty: give the MCP URL of the server to check (or 'embedded'), a 'relay-command' or an 'agent-command'"

start="$(pwd)"
absolute() { case "$1" in /*) printf '%s' "$1" ;; *) printf '%s/%s' "$start" "$1" ;; esac; }
out="$(absolute "${OSF_ACTION_OUTPUT_DIR:-osf-results}")"
mkdir -p "$out" || fail "cannot create the output folder $out"

if [ "${OSF_ACTION_INSTALL:-true}" = "true" ]; then
    "$python" -m pip install --quiet --disable-pip-version-check "$kit" \
        || fail "could not install pytest-osfoundry from $kit"
fi

# Pass each given input to the suite as its OSF_* variable. An empty input (a secret
# that was never defined) is left out rather than passed empty: under --osf-strict the
# checks that need it then fail, naming the option.
for name in TARGET RELAY_URL AGENT_TOKEN OTHER_AGENT_TOKEN READ_TOKEN DESKTOP_TOKEN \
            PROJECT_ID STRANGER_TOKEN STRANGER_DESKTOP_TOKEN STRANGER_PROJECT_ID LEVEL; do
    value="$(printenv "OSF_ACTION_$name" || true)"
    if [ -n "$value" ]; then export "OSF_$name=$value"; else unset "OSF_$name"; fi
done
# Switches: 'true' turns the suite's option on; empty or 'false' leaves it off.
for name in AGENT_REALTIME AGENT_RESTART; do
    value="$(printenv "OSF_ACTION_$name" || true)"
    case "$value" in
        true) export "OSF_$name=1" ;;
        "" | false) unset "OSF_$name" ;;
        *) fail "the '$(printf '%s' "${name,,}" | tr _ -)' input must be true or false, got '$value'" ;;
    esac
done
# The relay and agent suites run pytest from an empty folder too, so their command is
# wrapped to start from the calling repository's root (where its relative paths point).
for kind in RELAY AGENT; do
    command="$(printenv "OSF_ACTION_${kind}_COMMAND" || true)"
    if [ -z "$command" ]; then
        unset "OSF_${kind}_COMMAND"
    elif [ "$command" = "embedded" ]; then
        export "OSF_${kind}_COMMAND=embedded"
    else
        wrapped="$("$python" -c 'import shlex, sys
print(shlex.join(["bash", "-c", "cd " + shlex.quote(sys.argv[1]) + " && exec " + sys.argv[2]]))' \
            "$start" "$command")" || fail "could not quote the ${kind,,} command"
        export "OSF_${kind}_COMMAND=$wrapped"
    fi
done
if [ -n "${OSF_ACTION_BASELINE:-}" ]; then
    export OSF_BASELINE="$(absolute "$OSF_ACTION_BASELINE")"
else
    unset OSF_BASELINE
fi
export OSF_STRICT=1
export OSF_REPORT="$out/osf-report.json"
export OSF_MARKDOWN="$out/osf-summary.md"
unset OSF_WRITE_BASELINE
# embedded:MODULE:FACTORY may name a module of the repository being checked.
export PYTHONPATH="$start${PYTHONPATH:+:$PYTHONPATH}"

# Reports left by an earlier run must not stand in for this one's (a run that stops
# before writing them must not show the last run's green summary).
rm -f "$OSF_REPORT" "$OSF_MARKDOWN" "$out/osf-junit.xml"

# Run from an empty folder: the suite is the installed one, and the calling
# repository's own pytest configuration and conftest files stay out of it.
scratch="$(mktemp -d)"
(cd "$scratch" && "$python" -m pytest -p no:cacheprovider -o addopts= \
    --junitxml="$out/osf-junit.xml" -o junit_family=xunit2)
status=$?
rm -rf "$scratch"

if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
    if [ -f "$OSF_MARKDOWN" ]; then
        cat "$OSF_MARKDOWN" >> "$GITHUB_STEP_SUMMARY"
    else
        printf '## osFoundry conformance: not run (exit status %s)\n\n**❌ not ok**\n\nSee the job log for the message.\n' \
            "$status" >> "$GITHUB_STEP_SUMMARY"
    fi
fi
if [ -n "${GITHUB_OUTPUT:-}" ]; then
    {
        echo "report=$OSF_REPORT"
        echo "markdown=$OSF_MARKDOWN"
        echo "junit=$out/osf-junit.xml"
        echo "exit-code=$status"
    } >> "$GITHUB_OUTPUT"
fi
exit "$status"
