swf_runtime::workflow!("../../../../tests/ui/compensation_unknown_target.sw.yaml");

fn main() {}
