swf_runtime::workflow!("../../../../tests/ui/kebab_eq_not_number.sw.yaml");

fn main() {}
