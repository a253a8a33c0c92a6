swf_runtime::workflow!("ui/bad_regex.sw.yaml");

fn main() {}
