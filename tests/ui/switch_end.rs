swf_runtime::workflow!("ui/switch_end.sw.yaml");

fn main() {}
