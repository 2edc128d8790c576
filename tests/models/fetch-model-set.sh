#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Re-creates the public model set's cache (docs/model-coverage.md) from git
# mirrors of the public repositories listed in model-set.tsv:
#
#   tests/models/fetch-model-set.sh            (cache: $M2I_MODEL_CACHE, default ~/.cache/m2i-models)
#
# Nothing here downloads. The mirrors are bare git repositories laid out as
# $M2I_MIRROR_DIR/<owner>+<name>/repo (default /work/.mirror): the search
# tool's `fetch` makes exactly that (one call per repository of the
# manifest); a `git clone --mirror` of the same repository works too. Each
# file is taken with `git show COMMIT:PATH`, checked against the manifest's
# size and sha256, and written as CACHE/<name>/<file>. A repository whose
# mirror is absent is reported and skipped; a file that does not match is
# an error (exit 1). Files already in the cache with the right sha256 are
# kept.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
manifest="$here/model-set.tsv"
cache=${M2I_MODEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/m2i-models}
mirrors=${M2I_MIRROR_DIR:-/work/.mirror}
mkdir -p "$cache"
status=0
missing=""
n_ok=0
while IFS='	' read -r name repo commit path blob sha bytes; do
  case "$name" in ''|'#'*) continue ;; esac
  out="$cache/$name/$(basename "$path")"
  if [ -f "$out" ] && [ "$(sha256sum "$out" | cut -d' ' -f1)" = "$sha" ]; then
    n_ok=$((n_ok + 1))
    continue
  fi
  git_dir="$mirrors/$(echo "$repo" | tr / +)/repo"
  if [ ! -d "$git_dir" ]; then
    case " $missing " in *" $repo "*) ;; *) missing="$missing $repo" ;; esac
    continue
  fi
  mkdir -p "$cache/$name"
  if ! git --git-dir "$git_dir" show "$commit:$path" > "$out.part" 2>/dev/null; then
    echo "fetch-model-set: $repo has no $path at $commit" >&2
    rm -f "$out.part"; status=1; continue
  fi
  got=$(sha256sum "$out.part" | cut -d' ' -f1)
  size=$(wc -c < "$out.part")
  if [ "$got" != "$sha" ] || [ "$size" -ne "$bytes" ]; then
    echo "fetch-model-set: $name/$(basename "$path"): $size bytes, sha256 $got; the manifest says $bytes, $sha" >&2
    rm -f "$out.part"; status=1; continue
  fi
  mv "$out.part" "$out"
  n_ok=$((n_ok + 1))
done < "$manifest"
for r in $missing; do
  echo "fetch-model-set: no mirror of $r under $mirrors (make it with the search tool's fetch github:$r, or git clone --mirror into $mirrors/$(echo "$r" | tr / +)/repo)" >&2
done
echo "fetch-model-set: $n_ok files in $cache"
exit $status
