swf_runtime::workflow!("../../../../tests/ui/bad_jsonpath.sw.yaml");

fn main() {}
