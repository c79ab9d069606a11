"""Prints 'PASSED FAILED' summed over the summary lines of the test runners in a log:
cargo test, pytest, node --test, Maven Surefire."""

import re
import sys

text = open(sys.argv[1], errors="replace").read()
passed = failed = 0
# cargo: "test result: ok. 11 passed; 0 failed; 0 ignored; ..."
for p, f in re.findall(r"test result: \w+\. (\d+) passed; (\d+) failed", text):
    passed += int(p)
    failed += int(f)
# pytest: "=== 12 passed, 1 failed, 2 skipped in 3.2s ===", or without the banner under -q
for line in re.findall(r"^=*\s*(\d+ (?:passed|failed|errors?)[^=\n]*?) in [\d.]+s\b.*$", text, re.M):
    m = re.search(r"(\d+) passed", line)
    passed += int(m.group(1)) if m else 0
    m = re.search(r"(\d+) failed", line)
    failed += int(m.group(1)) if m else 0
    m = re.search(r"(\d+) errors?", line)
    failed += int(m.group(1)) if m else 0
# node --test: "# pass 10" / "# fail 0"
for p in re.findall(r"^# pass (\d+)$", text, re.M):
    passed += int(p)
for f in re.findall(r"^# fail (\d+)$", text, re.M):
    failed += int(f)
# Surefire: the last "Tests run: N, Failures: F, Errors: E, Skipped: S" of each build (the total)
for block in re.split(r"\[INFO\] BUILD (?:SUCCESS|FAILURE)", text)[:-1] or []:
    runs = re.findall(r"Tests run: (\d+), Failures: (\d+), Errors: (\d+), Skipped: (\d+)\s*$", block, re.M)
    if runs:
        n, fl, er, sk = map(int, runs[-1])
        passed += n - fl - er - sk
        failed += fl + er
# plain lines from our own runners: "interop: 16 passed, 0 failed"
for p, f in re.findall(r"^(?:\w+: )?(\d+) passed, (\d+) failed$", text, re.M):
    passed += int(p)
    failed += int(f)
print(passed, failed)
