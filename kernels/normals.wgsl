// normals.wgsl — port of crates/swg/src/surface/normals.rs (swg-trn §5.2 step 2, §5.1): the unit normal
// at a post from the 3×3 heights around it. Same names, same f32 operation order.

/// `NormalMethod` in crates/swg/src/surface/normals.rs.
const NORMALS_FACES: u32 = 0u;
const NORMALS_CENTRAL: u32 = 1u;

/// Port of `normalize`: n / |n|, or straight up where |n| is 0 or not finite.
fn normalize3(n: vec3<f32>) -> vec3<f32> {
    let len = sqrt(n.x * n.x + n.y * n.y + n.z * n.z);
    if (len > 0.0 && len <= F32_MAX) {
        return vec3<f32>(n.x / len, n.y / len, n.z / len);
    }
    return vec3<f32>(0.0, 1.0, 0.0);
}

/// The upward unit normal of triangle abc (port of `face_normal`).
fn face_normal(a: vec3<f32>, b: vec3<f32>, c: vec3<f32>) -> vec3<f32> {
    let u = vec3<f32>(b.x - a.x, b.y - a.y, b.z - a.z);
    let v = vec3<f32>(c.x - a.x, c.y - a.y, c.z - a.z);
    var n = vec3<f32>(u.y * v.z - u.z * v.y, u.z * v.x - u.x * v.z, u.x * v.y - u.y * v.x);
    if (n.y < 0.0) {
        n = vec3<f32>(-n.x, -n.y, -n.z);
    }
    return normalize3(n);
}

/// Corner (dx, dz) of the 3×3 neighbourhood as a point: (dx·spacing, h, dz·spacing).
fn normal_corner(h: array<array<f32, 3>, 3>, spacing: f32, c: vec2<i32>) -> vec3<f32> {
    return vec3<f32>(f32(c.x) * spacing, h[c.y + 1][c.x + 1], f32(c.y) * spacing);
}

/// Unit normal at a post from `h[dz + 1][dx + 1]` (port of `post_normal`). (gx, gz): the
/// post's global indices modulo 2^32, which fix each quad's diagonal (only their parity
/// matters, and wrapping keeps it).
fn post_normal(method: u32, h: array<array<f32, 3>, 3>, spacing: f32, gx: u32, gz: u32) -> vec3<f32> {
    if (method == NORMALS_CENTRAL) {
        let dx = (h[1][2] - h[1][0]) / (2.0 * spacing);
        let dz = (h[2][1] - h[0][1]) / (2.0 * spacing);
        return normalize3(vec3<f32>(-dx, 1.0, -dz));
    }
    let quads = array<vec2<i32>, 4>(vec2<i32>(-1, -1), vec2<i32>(0, -1), vec2<i32>(-1, 0), vec2<i32>(0, 0));
    var sum = vec3<f32>(0.0, 0.0, 0.0);
    for (var q = 0u; q < 4u; q++) {
        let o = quads[q];
        let c00 = o;
        let c10 = o + vec2<i32>(1, 0);
        let c01 = o + vec2<i32>(0, 1);
        let c11 = o + vec2<i32>(1, 1);
        let even = (((gx + bitcast<u32>(o.x)) ^ (gz + bitcast<u32>(o.y))) & 1u) == 0u;
        var tris: array<array<vec2<i32>, 3>, 2>;
        if (even) {
            tris = array<array<vec2<i32>, 3>, 2>(array<vec2<i32>, 3>(c00, c10, c11), array<vec2<i32>, 3>(c00, c11, c01));
        } else {
            tris = array<array<vec2<i32>, 3>, 2>(array<vec2<i32>, 3>(c00, c10, c01), array<vec2<i32>, 3>(c10, c11, c01));
        }
        for (var k = 0u; k < 2u; k++) {
            let tri = tris[k];
            // Only the triangles that have the post (0, 0) as a corner.
            if (!(all(tri[0] == vec2<i32>(0, 0)) || all(tri[1] == vec2<i32>(0, 0)) || all(tri[2] == vec2<i32>(0, 0)))) {
                continue;
            }
            let n = face_normal(normal_corner(h, spacing, tri[0]), normal_corner(h, spacing, tri[1]), normal_corner(h, spacing, tri[2]));
            sum = vec3<f32>(sum.x + n.x, sum.y + n.y, sum.z + n.z);
        }
    }
    return normalize3(sum);
}
