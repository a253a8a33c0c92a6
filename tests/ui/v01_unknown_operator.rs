swf_runtime::workflow!("../../../../tests/ui/v01_unknown_operator.sw.yaml");

fn main() {}
