swf_runtime::workflow!("../../../../tests/ui/v01_kebab_key.sw.yaml");

fn main() {}
