swf_runtime::workflow!("ui/v01_unknown_operator.sw.yaml");

fn main() {}
