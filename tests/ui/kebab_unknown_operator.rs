swf_runtime::workflow!("../../../../tests/ui/kebab_unknown_operator.sw.yaml");

fn main() {}
