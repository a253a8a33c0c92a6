swf_runtime::workflow!("ui/bad_data_paths.sw.yaml");

fn main() {}
