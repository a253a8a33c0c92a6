swf_runtime::workflow!("ui/v01_kebab_key.sw.yaml");

fn main() {}
