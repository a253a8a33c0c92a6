swf_runtime::workflow!("ui/kebab_eq_not_number.sw.yaml");

fn main() {}
