#!/usr/bin/env bash
# Proves a refactoring changed no generated code: compiles every corpus and perf
# graph (and the bundled examples) to LLVM IR and a C header, and compares them
# with a snapshot taken before the change.
#
#   bash scripts/ir-identity.sh snapshot DIR [--tgc PATH]   write DIR (the "before")
#   bash scripts/ir-identity.sh check DIR [--tgc PATH]      compile again, diff against DIR
#   bash scripts/ir-identity.sh rev REV [--tgc PATH]        build tgc at REV in a scratch
#                                                           tree, snapshot it, check this tree
#
# A graph that tgc refuses is part of the snapshot too: its diagnostics are
# compared, so a refactoring can't silently start (or stop) rejecting one.
# Exits 0 when every output is byte-identical, 1 with the differing files listed.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD

mode=${1:-}; arg=${2:-}
[[ $mode =~ ^(snapshot|check|rev)$ && -n $arg ]] || { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
shift 2
tgc=$root/build/tools/tgc/tgc
[[ ${1:-} == --tgc && -n ${2:-} ]] && tgc=$(realpath "$2")

# Every graph the snapshot covers, as NAME<TAB>PATH.
graphs() {
  local d
  for d in ../shared/corpus/*/ ../shared/perf/*/; do
    [[ -f $d/graph.json ]] && printf '%s\t%s\n' "$(basename "$(dirname "$d")")_$(basename "$d")" "$d/graph.json"
  done
  for f in examples/*.tgc examples/*/*.json; do
    [[ -f $f ]] && printf '%s\t%s\n' "examples_$(echo "${f#examples/}" | tr / _)" "$f"
  done
}

# snapshot TGC DIR: one folder per graph with its .ll, .h, or its diagnostics.
snapshot() {
  local bin=$1 out=$2 name path
  rm -rf "$out"; mkdir -p "$out"
  while IFS=$'\t' read -r name path; do
    if ! "$bin" compile "$path" -o "$out/$name/model.o" --name model --emit=llvm,header \
         >"$out/$name.log" 2>&1; then
      sed "s|$root/||g" "$out/$name.log" >"$out/$name.err"
    fi
    rm -f "$out/$name.log"
  done < <(graphs)
  echo "ir-identity: $(graphs | wc -l) graphs compiled into $out"
}

check() {
  local before=$1 after
  after=$(mktemp -d)
  snapshot "$tgc" "$after" >/dev/null
  if diff -r -q "$before" "$after" >/dev/null; then
    echo "ir-identity: identical ($(graphs | wc -l) graphs: LLVM IR, headers and diagnostics)"
    rm -rf "$after"; return 0
  fi
  echo "ir-identity: DIFFERENT (before $before, after $after):"
  diff -r -q "$before" "$after"
  return 1
}

case $mode in
  snapshot) snapshot "$tgc" "$arg" ;;
  check) check "$arg" ;;
  rev)
    scratch=$(mktemp -d)
    git worktree add -q --detach "$scratch/src" "$arg" || exit 1
    cmake -S "$scratch/src" -B "$scratch/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 >/dev/null &&
      ninja -C "$scratch/build" tgc >/dev/null || { echo "ir-identity: building $arg failed"; exit 1; }
    snapshot "$scratch/build/tools/tgc/tgc" "$scratch/before"
    check "$scratch/before"; status=$?
    git worktree remove --force "$scratch/src"; rm -rf "$scratch"
    exit $status ;;
esac
