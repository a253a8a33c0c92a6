swf_runtime::workflow!("ui/unknown_key.sw.yaml");

fn main() {}
