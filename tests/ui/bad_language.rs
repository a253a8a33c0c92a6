swf_runtime::workflow!("../../../../tests/ui/bad_language.sw.yaml");

fn main() {}
