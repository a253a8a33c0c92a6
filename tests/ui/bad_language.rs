swf_runtime::workflow!("ui/bad_language.sw.yaml");

fn main() {}
