swf_runtime::workflow!("ui/no_start.sw.yaml");

fn main() {}
