swf_runtime::workflow!("ui/compensation_unknown_target.sw.yaml");

fn main() {}
