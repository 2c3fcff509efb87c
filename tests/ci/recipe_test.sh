#!/usr/bin/env bash
# The CI recipe (scripts/ci-bench, docs/ci.md) end to end on a real database, as a workflow
# runs it: a first run records the baseline, a second compares with it, and a regression forced
# into the database makes the recipe fail with exit code 4 under a tight threshold only.
#
#   BEAMLAB=path/to/beamlab bash tests/ci/recipe_test.sh SOURCE_DIR WORK_DIR
set -euo pipefail
src=$1
work=$2
rm -rf "$work"
mkdir -p "$work"
cd "$work"

export BEAMLAB_DB=$work/bench.db BEAMLAB_OUT=$work/out GITHUB_STEP_SUMMARY=$work/step-summary.md
export BEAMLAB_CORPUS=$src/tests/corpora/tiny.json BEAMLAB_RUNS=6
export BEAMLAB_BENCH_ARGS="--processes 2 --sample-ms 2 --no-suite --quiet"

fail() { echo "ci.recipe: $*" >&2; exit 1; }

# docs/ci.md quotes the script: the quote must be a verbatim part of it.
# shellcheck disable=SC2016 # the backquotes are Markdown, for Python
python3 -c '
import re, sys
doc, script = (open(f).read() for f in sys.argv[1:])
quote = re.search(r"<!-- ci-bench: begin -->\n```sh\n(.*?)```\n<!-- ci-bench: end -->", doc, re.S)
assert quote and quote.group(1) in script, "docs/ci.md quotes lines scripts/ci-bench lacks"
' "$src/docs/ci.md" "$src/scripts/ci-bench" || fail "docs/ci.md and scripts/ci-bench differ"

# Runs the recipe as commit $1 with threshold $2; checks its exit code is $3.
recipe() {
  local status=0
  BEAMLAB_LABEL=$1 BEAMLAB_FAIL_ABOVE=$2 bash "$src/scripts/ci-bench" || status=$?
  ((status == $3)) || fail "commit $1, --fail-above $2: exit code $status, expected $3"
  echo "ci.recipe: commit $1, --fail-above $2: exit code $status, as expected"
}

# The reports exist; the JUnit file is XML with test cases, $1 of them failed (any: "any").
check_reports() {
  grep -qs '<html' out/report.html || fail "no HTML report"
  [[ -s out/report.json && -s out/report.md ]] || fail "no JSON or Markdown report"
  python3 -c '
import sys, xml.etree.ElementTree as ET
root = ET.parse("out/report.xml").getroot()
cases = root.findall(".//testcase")
failed = [c.get("name") for c in cases if c.find("failure") is not None]
assert root.tag == "testsuites" and cases, "no test cases"
assert sys.argv[1] == "any" or len(failed) == int(sys.argv[1]), f"{len(failed)} failed: {failed}"
print(f"ci.recipe: report.xml: {len(cases)} test cases, {len(failed)} failed")
' "$1" || fail "out/report.xml is not the JUnit file expected"
}

# 1. The first run: no baseline yet; the run is recorded and summarized alone.
recipe base 10 0
grep -q "No baseline yet" out/summary.md || fail "the first run's summary does not say it is the baseline"
grep -q "run 1 'base'" out/summary.md || fail "the first run's summary does not name it"
check_reports 0

# 2. The next commit, compared with it: both runs named. The same code, but two runs on a busy
# machine can differ beyond their noise: the generous threshold passes whatever the verdicts.
recipe next 1000000000 0
grep -q "^## beamlab report: run 2 'next' .* vs run 1 'base'" out/summary.md ||
  fail "the summary does not name both runs"
grep -q "run 2 'next' .* vs run 1 'base'" "$GITHUB_STEP_SUMMARY" || fail "the job summary lacks the report"
check_reports any

# 3. A regression: the baseline's samples made 10^6x faster, so every measurement of the next
# run is far slower, even against a baseline sample that a loaded machine slowed 1000x (with
# 1000x, such an outlier overlapped the next run's samples and one case came out a tie). A 50%
# threshold fails (exit 4); a threshold above the change does not.
python3 -c '
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for id, metrics in db.execute("SELECT id, metrics FROM benchmarks WHERE run_id = 1").fetchall():
    m = json.loads(metrics)
    m["samples_ms"] = [ms / 1e6 for ms in m["samples_ms"]]
    m["median_ms"] /= 1e6
    db.execute("UPDATE benchmarks SET metrics = ? WHERE id = ?", (json.dumps(m), id))
db.commit()
' "$BEAMLAB_DB"
export BEAMLAB_BASELINE=base
recipe slow 50 4
grep -q "A regression above 50%: the job fails" out/summary.md || fail "the summary hides the failure"
check_reports 4
recipe slow-again 1000000000000 0
check_reports 4
echo "ci.recipe: ok"
