swf_runtime::workflow!("ui/kebab_unknown_operator.sw.yaml");

fn main() {}
