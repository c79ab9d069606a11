#!/usr/bin/env bash
# One version for everything: the Cargo workspace, the Python wheel, the npm packages and the JVM
# artifact (and the places that name it: install snippets, example and interop projects).
# The source of truth is `version` under [workspace.package] in Cargo.toml.
#
#   scripts/set-version.sh X.Y.Z     write X.Y.Z everywhere
#   scripts/set-version.sh --print   print the current version
#   scripts/set-version.sh --check   fail unless every file carries the current version
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

current() { sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1; }

# file|extended regex with @V@ where the version stands. Each must match at least once.
places=(
  'Cargo.toml|^version = "@V@"$'
  'Cargo.toml|^redelay = \{ path = "core", version = "@V@" \}$'
  'bindings-python/pyproject.toml|^version = "@V@"$'
  'bindings-python/python/redelay/__init__.py|^__version__ = "@V@"$'
  'bindings-node/package.json|^  "version": "@V@",$'
  'bindings-node/package-lock.json|^  "version": "@V@",$'
  'bindings-node/package-lock.json|^      "version": "@V@",$'
  "bindings-node/index.js|bindingPackageVersion !== '@V@'"
  'bindings-kotlin/jvm/pom.xml|^  <version>@V@</version>$'
  'bindings-kotlin/example/pom.xml|^      <version>@V@</version>$'
  'tests/interop/kotlin/pom.xml|^      <version>@V@</version>$'
  'tests/interop/run.sh|dev/redelay/redelay/@V@/redelay-@V@\.jar'
  'README.md|dev\.redelay:redelay:@V@'
  'README.md|redelay-cli-@V@-'
  'bindings-kotlin/README.md|dev\.redelay:redelay:@V@'
  'docs/kotlin.md|dev\.redelay:redelay:@V@'
)

check() {
  local v="$1" bad=0 place file re
  local ev="${v//./\\.}"
  for place in "${places[@]}"; do
    file="${place%%|*}"; re="${place#*|}"; re="${re//@V@/$ev}"
    if [ -f "$file" ] && ! grep -Eq "$re" "$file"; then
      echo "set-version: $file does not carry version $v (looked for: $re)" >&2
      bad=1
    fi
  done
  # Cargo.lock: every workspace crate.
  for crate in redelay redelay-cli redelay-kotlin redelay-node redelay-python redelay-uniffi-bindgen; do
    if ! grep -A1 -x "name = \"$crate\"" Cargo.lock | grep -qx "version = \"$v\""; then
      echo "set-version: Cargo.lock has $crate at another version than $v" >&2
      bad=1
    fi
  done
  return $bad
}

case "${1:-}" in
  --print) current; exit 0 ;;
  --check) v="$(current)"; check "$v" && echo "version $v everywhere"; exit $? ;;
  ''|-h|--help) sed -n '2,9p' "$0"; exit 64 ;;
esac

new="$1"
if ! [[ "$new" =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
  echo "set-version: '$new' is not a version like 1.2.3 or 1.2.3-rc.1" >&2
  exit 64
fi
old="$(current)"
check "$old" || { echo "set-version: fix the files above first (they should all say $old)" >&2; exit 1; }
[ "$old" = "$new" ] && { echo "already $new"; exit 0; }

eold="${old//./\\.}"
for place in "${places[@]}"; do
  file="${place%%|*}"; re="${place#*|}"
  [ -f "$file" ] || continue
  # Replace the version only on the lines the pattern names (the pattern without anchors, as
  # a sed address), so an unrelated 0.1.0 (a dependency's version) is left alone.
  addr="${re//@V@/$eold}"
  sed -E -i "/$(printf '%s' "$addr" | sed 's,/,\\/,g')/ s/$eold/$new/g" "$file"
done
# Markdown install snippets also spell it as <version>X</version> (Maven).
for f in README.md bindings-kotlin/README.md docs/kotlin.md; do
  [ -f "$f" ] && sed -i "s|<version>$old</version>|<version>$new</version>|g" "$f"
done
for crate in redelay redelay-cli redelay-kotlin redelay-node redelay-python redelay-uniffi-bindgen; do
  sed -i "/^name = \"$crate\"\$/{n;s/^version = \"$eold\"\$/version = \"$new\"/}" Cargo.lock
done
check "$new"
echo "version $old -> $new (now add a CHANGELOG section for $new; see RELEASING.md)"
