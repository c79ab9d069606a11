#!/usr/bin/env bash
# Builds the native library and generates the Kotlin bindings for the Maven build.
#
#   build-native.sh OUT_DIR
#
# Writes OUT_DIR/generated-sources/uniffi/dev/redelay/ffi/*.kt and
# OUT_DIR/native/<jna-platform>/libredelay_kotlin.so (stripped). Maven calls it in the
# generate-sources phase (jvm/pom.xml); ci.sh and a plain `mvn install` both go through it.
#
# REDELAY_CARGO_PROFILE selects the cargo profile of the library (default: release).
# The generator (uniffi-bindgen) is always built in the dev profile: it only reads metadata.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
out="${1:?usage: build-native.sh OUT_DIR}"
profile="${REDELAY_CARGO_PROFILE:-release}"
target="${CARGO_TARGET_DIR:-$root/target}"
case "$profile" in
  dev) profile_dir=debug ;;
  *) profile_dir="$profile" ;;
esac

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) platform=linux-x86-64; lib=libredelay_kotlin.so ;;
  Linux-aarch64) platform=linux-aarch64; lib=libredelay_kotlin.so ;;
  Darwin-x86_64) platform=darwin-x86-64; lib=libredelay_kotlin.dylib ;;
  Darwin-arm64) platform=darwin-aarch64; lib=libredelay_kotlin.dylib ;;
  *) echo "build-native.sh: unsupported platform $(uname -s)-$(uname -m)" >&2; exit 1 ;;
esac

cd "$root"
echo "build-native: cargo build -p redelay-kotlin --profile $profile" >&2
cargo build -p redelay-kotlin --profile "$profile"
echo "build-native: cargo build -p redelay-uniffi-bindgen (dev)" >&2
cargo build -p redelay-uniffi-bindgen

so="$target/$profile_dir/$lib"
gen="$out/generated-sources/uniffi"
rm -rf "$gen" "$out/native"
mkdir -p "$gen" "$out/native/$platform"
# Library mode reads the UNIFFI_META_* symbols, so generate from the unstripped library.
"$target/debug/uniffi-bindgen" generate "$so" --language kotlin --out-dir "$gen" --no-format
cp "$so" "$out/native/$platform/$lib"
if command -v strip >/dev/null 2>&1 && [ "$platform" != "${platform#linux}" ]; then
  strip --strip-unneeded "$out/native/$platform/$lib"
fi
echo "build-native: $(du -h "$out/native/$platform/$lib" | cut -f1) $out/native/$platform/$lib" >&2
