swf_runtime::workflow!("../../../../tests/ui/compensation_crossing.sw.yaml");

fn main() {}
