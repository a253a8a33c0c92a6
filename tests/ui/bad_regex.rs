swf_runtime::workflow!("../../../../tests/ui/bad_regex.sw.yaml");

fn main() {}
