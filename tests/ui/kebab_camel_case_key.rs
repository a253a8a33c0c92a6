swf_runtime::workflow!("../../../../tests/ui/kebab_camel_case_key.sw.yaml");

fn main() {}
