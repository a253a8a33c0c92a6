swf_runtime::workflow!("ui/unknown_target.sw.yaml");

fn main() {}
