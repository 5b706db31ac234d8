//! Best fit inside an admitted call ([`Pool::admit`]): a buffer larger than the request's class is
//! taken only while the room the admission left covers its padding, so every acquisition the
//! check admitted still fits.

use super::*;

#[test]
fn best_fit_keeps_to_the_room_an_admission_left() {
    let mut p = pool(8192, 1 << 16);
    let filler = p.acquire(4096).unwrap();
    let spare = p.acquire(1280).unwrap();
    p.release(spare); // a free 1280 buffer: the class after 1024
                      // in use 4096 of 8192: two 1024s and a 2048 leave no room at all
    let before = p.admit(1024 + 1024 + 2048, 2048).unwrap();
    assert_eq!(before, None, "no call was under way");
    let a = p.acquire(1024).unwrap();
    assert_eq!(
        a.size, 1024,
        "not the free 1280: its 256 bytes of padding would not fit"
    );
    let b = p.acquire(1024).unwrap();
    let c = p.acquire(2048).expect("every admitted buffer fits");
    p.end_admitted(before);
    assert_eq!(p.usage().bytes_held - p.usage().bytes_cached, 8192);
    for l in [a, b, c] {
        p.release(l);
    }
    // with 256 bytes of room the free 1280 serves a 1024 request, and the room is spent
    p.clear_cache();
    let spare = p.acquire(1280).unwrap();
    p.release(spare);
    let before = p.admit(1024 + 2048, 2048).unwrap();
    // admissions nest: an inner one with more room keeps the outer one's smaller room
    let inner = p.admit(1024, 1024).unwrap();
    assert_eq!(inner, Some(1024), "the outer call's room");
    p.end_admitted(inner);
    let a = p.acquire(1024).unwrap();
    assert_eq!(a.size, 1280, "best fit, its padding within the room");
    let b = p.acquire(2048).expect("still fits");
    p.end_admitted(before);
    // outside a call best fit is as before
    p.release(a);
    let d = p.acquire(1024).unwrap();
    assert_eq!(d.size, 1280);
    for l in [b, d, filler] {
        p.release(l);
    }
}
