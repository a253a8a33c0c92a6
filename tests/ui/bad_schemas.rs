swf_runtime::workflow!("ui/bad_schemas.sw.yaml");

fn main() {}
