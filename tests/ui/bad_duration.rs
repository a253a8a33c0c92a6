swf_runtime::workflow!("ui/bad_duration.sw.yaml");

fn main() {}
