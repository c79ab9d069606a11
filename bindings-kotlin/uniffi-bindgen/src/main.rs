//! The UniFFI generator, pinned to the same version as the scaffolding in `redelay-kotlin`.
fn main() {
    uniffi::uniffi_bindgen_main()
}
