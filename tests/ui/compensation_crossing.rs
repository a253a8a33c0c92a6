swf_runtime::workflow!("ui/compensation_crossing.sw.yaml");

fn main() {}
