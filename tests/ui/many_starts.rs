swf_runtime::workflow!("ui/many_starts.sw.yaml");

fn main() {}
