swf_runtime::workflow!("ui/bad_jsonpath.sw.yaml");

fn main() {}
