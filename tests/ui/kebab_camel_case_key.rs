swf_runtime::workflow!("ui/kebab_camel_case_key.sw.yaml");

fn main() {}
