//! The library prints nothing: its messages go to the callback of
//! `trnbake_set_message_callback`, with the level and the user data given, or nowhere.
//! Called from Rust exactly as C calls it, on the demo terrain with a height rule whose
//! operation the plan does not know (a warning when the terrain opens).

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::ptr::null;
use std::sync::Mutex;

use trnbake::*;
use trnbake_swg::model::layer::LayerItem;
use trnbake_swg::model::rules::RuleKind;

/// Sets every height-constant rule's operation to 9 (not one of 0..=3); true when any was found.
fn unknown_operations(items: &mut [LayerItem]) -> bool {
    let mut any = false;
    for item in items {
        match item {
            LayerItem::Rule(r) => {
                if let RuleKind::HeightConstant(c) = &mut r.kind {
                    c.operation = 9;
                    any = true;
                }
            }
            LayerItem::Layer(l) => any |= unknown_operations(&mut l.children),
            _ => {}
        }
    }
    any
}

unsafe extern "C" fn collect(level: c_int, message: *const c_char, user_data: *mut c_void) {
    let seen = &*(user_data as *const Mutex<Vec<(c_int, String)>>);
    seen.lock().unwrap().push((level, CStr::from_ptr(message).to_string_lossy().into_owned()));
}

#[test]
fn messages_go_to_the_callback_and_nowhere_without_one() {
    let mut terrain = trnbake_swg::model::json::demo_terrain();
    assert!(unknown_operations(&mut terrain.generator.layers), "the demo has a height-constant rule");
    let path = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("capi-messages.trn");
    std::fs::write(&path, terrain.to_bytes()).unwrap();
    let path = CString::new(path.to_str().unwrap()).unwrap();

    let seen: &'static Mutex<Vec<(c_int, String)>> = Box::leak(Box::new(Mutex::new(Vec::new())));
    unsafe { trnbake_set_message_callback(Some(collect), seen as *const _ as *mut c_void) };
    let t = unsafe { trnbake_terrain_open(path.as_ptr(), null()) };
    assert!(!t.is_null());
    unsafe { trnbake_terrain_free(t) };
    let got = seen.lock().unwrap().clone();
    assert!(!got.is_empty(), "no message");
    assert!(got.iter().all(|(level, m)| *level == TRNBAKE_WARNING && m.contains("height operation 9 is unknown; ignored")), "{got:?}");

    // Removed: the next open tells nobody.
    unsafe { trnbake_set_message_callback(None, std::ptr::null_mut()) };
    let t = unsafe { trnbake_terrain_open(path.as_ptr(), null()) };
    assert!(!t.is_null());
    unsafe { trnbake_terrain_free(t) };
    assert_eq!(seen.lock().unwrap().len(), got.len());
}
