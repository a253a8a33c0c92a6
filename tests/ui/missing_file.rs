swf_runtime::workflow!("ui/does_not_exist.sw.yaml");

fn main() {}
