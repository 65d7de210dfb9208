#!/usr/bin/env bash
# Examples are tests: runs every `build/sim/composim ...` line of the README's ```sh blocks
# from the source directory and fails if any exits non-zero. Lines that read
# ../shared/data are skipped, with a message, when that folder is absent.
set -uo pipefail
src="$1"
bin="$2"
cd "$src"
fail=0; ran=0; skipped=0
skipped_out=()
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
awk '/^```sh/{f=1;next} /^```/{f=0} f && /^build\/sim\/composim /' README.md > "$tmp/cmds"
while IFS= read -r line; do
  needs_data=0
  [[ "$line" == *"../shared/data"* ]] && needs_data=1
  for word in $line; do  # a sweep spec whose traces are in the shared data folder
    [[ "$word" == *.json && -f "$word" ]] && grep -q '{data}' "$word" && needs_data=1
  done
  # A command that reads what a skipped one writes (`plot out/study` after its sweep) is
  # skipped with it.
  for word in $line; do
    for gone in "${skipped_out[@]}"; do [[ "$word" == "$gone" || "$word" == "$gone"/* ]] && needs_data=1; done
  done
  if [[ $needs_data == 1 && ! -d ../shared/data ]]; then
    echo "skipped (../shared/data absent): $line"; skipped=$((skipped+1))
    out=$(sed -n 's/.*--out \([^ ]*\).*/\1/p' <<< "$line"); [[ -n "$out" ]] && skipped_out+=("$out")
    continue
  fi
  cmd="${line/build\/sim\/composim/$bin}"
  cmd="${cmd//out\//$tmp\/out\/}"
  if (cd "$src" && eval "$cmd") > "$tmp/log" 2>&1; then
    echo "ok: $line"; ran=$((ran+1))
  else
    echo "FAILED: $line"; sed 's/^/  | /' "$tmp/log" | tail -20; fail=$((fail+1))
  fi
done < "$tmp/cmds"
echo "README commands: $ran passed, $fail failed, $skipped skipped"
[ "$ran" -gt 0 ] && [ "$fail" -eq 0 ]
