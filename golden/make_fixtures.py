#!/usr/bin/env python3
"""Author the golden corpus: the terrains of golden/*.json and the bitmaps under golden/data/.

Together the fixtures exercise every rule tag and version trnbake reads and writes, every
feather type of every boundary and range filter, every height operation, every fractal
combination rule (with and without bias and gain), bitmap filters (with and without gain, two
TGA encodings), roads and rivers (baked with roads on), water tables, and the surface
affectors (shader, flora, environment, colour, exclude, passable) whose maps come later.
`tests/golden.rs` lists what the corpus covers and fails on anything missing.

One of the terrains, demo.json, is the built-in demo of `trnbake bake` (embedded with
include_str!). The expected images and their numbers are not written here: after changing a
fixture, run `trnbake check --bless` and commit what it prints as changed.
Fixtures are sized for a few hundred posts a side (see golden/golden.json)."""
import json, os, struct

HERE = os.path.dirname(os.path.abspath(__file__))


def rule(kind, name, enabled=True, **fields):
    return {"enabled": enabled, "name": name, "type": kind, **fields}


def layer(name, children, invert_boundaries=False, invert_filters=False, enabled=True):
    return {"type": "layer", "enabled": enabled, "name": name, "invert_boundaries": invert_boundaries,
            "invert_filters": invert_filters, "expanded": True, "notes": "", "children": children}


def fractal(fid, name, seed, rule_, octaves=3, freq=0.004, bias=None, gain=None, offset=(0.0, 0.0), fz=None,
            multiplier=2.5, amplitude=0.45):
    return {"id": fid, "name": name, "fractal": {
        "seed": seed, "use_bias": bias is not None, "bias": bias if bias is not None else 0.5,
        "use_gain": gain is not None, "gain": gain if gain is not None else 0.5, "octaves": octaves,
        "octave_frequency_multiplier": multiplier, "amplitude": amplitude, "frequency_x": freq,
        "frequency_z": fz if fz is not None else freq, "offset_x": offset[0], "offset_z": offset[1],
        "combination_rule": rule_}}


def pts(*xz):
    return [{"x": float(x), "z": float(z)} for x, z in xz]


flora = lambda d, t, bd: {"min_distance": 0.0, "max_distance": d, "tile_size": t, "tile_border": bd, "seed": 0}


def header(source, width, water=None):
    return {
        "source_file": source, "map_width": float(width), "chunk_width": 8.0, "tiles_per_chunk": 2,
        "use_global_water_table": water is not None, "global_water_height": float(water or 0.0),
        "global_water_shader_size": 2.0, "global_water_shader": "demo_water" if water is not None else "",
        "environment_cycle_time": 3600.0,
        "collidable_flora": flora(50.0, 16.0, 4.0), "noncollidable_flora": flora(50.0, 4.0, 1.5),
        "radial_flora": flora(28.0, 1.0, 0.48), "far_radial_flora": {**flora(500.0, 32.0, 12.0), "min_distance": 120.0},
        "legacy_map": 1,
    }


def shader_families(*names):
    colours = [[60, 140, 50], [120, 110, 100], [220, 200, 140], [90, 90, 95], [40, 60, 160]]
    return {"version": 6, "families": [
        {"id": i + 1, "name": n, "surface_properties": "", "color": colours[i % len(colours)], "shader_size": 2.0,
         "feather_clamp": 1.0, "children": [{"name": n + "_a", "weight": 1.0}]} for i, n in enumerate(names)]}


def terrain(source, width, layers, fractals, water=None, shaders=("grass", "rock", "sand"), flora_fams=None,
            radial_fams=None, env_fams=None, bitmaps=None):
    gen = {
        "shader_families": shader_families(*shaders),
        "flora_families": {"version": 8, "families": flora_fams if flora_fams is not None else [
            {"id": 1, "name": "trees", "color": [20, 90, 20], "density": 0.6, "floats": False, "children": []}]},
        "radial_families": {"version": 4, "families": radial_fams or []},
        "environment_families": {"version": 2, "families": env_fams or []},
        "fractal_families": {"version": 0, "families": fractals},
    }
    if bitmaps is not None:
        gen["bitmap_families"] = {"version": 0, "families": bitmaps}
    gen["layers"] = layers
    return {"version": 15, "header": header(source, width, water), "generator": gen}


def cell(i, j, size=512.0, cells=5):
    """Centre of cell (i, j) of a cells × cells grid of size-metre cells centred on the origin."""
    return (-(cells - 1) * size / 2 + i * size, -(cells - 1) * size / 2 + j * size)


def cell_rect(i, j, margin=16.0, size=512.0, cells=5, **water):
    cx, cz = cell(i, j, size, cells)
    h = size / 2 - margin
    return rule("rectangle", f"cell {i},{j}", x0=cx - h, z0=cz - h, x1=cx + h, z1=cz + h, feather_type=0,
                feather_amount=0.0, **water)


def add(h, name="raise"):
    return rule("height_constant", name, operation=1, height=float(h))


def write_json(name, value):
    with open(os.path.join(HERE, name), "w") as f:
        json.dump(value, f, indent=1)
        f.write("\n")
    print("wrote", name)


# ---------------------------------------------------------------------------------------------
# demo: the built-in demo terrain of `trnbake bake` (a 4 km map touching every height rule).

demo_layers = [
    layer("base hills", [
        rule("height_fractal", "rolling hills", family_id=1, operation=0, scale_y=120.0),
        rule("shader_constant", "grass", family_id=1, use_feather_clamp_override=False, feather_clamp_override=1.0),
        rule("flora_collidable", "trees", family_id=1, add=True, remove_all=False, use_density_override=False, density_override=1.0),
    ]),
    layer("ridges (crest fractal, multiply)", [
        rule("circle", "ridge zone", center_x=900.0, center_z=700.0, radius=900.0, feather_type=3, feather_amount=0.5),
        rule("height_fractal", "ridges", family_id=2, operation=1, scale_y=80.0),
        layer("ridge roughness", [
            rule("filter_fractal", "patchy", family_id=3, feather_type=2, feather_amount=0.3, low=0.2, high=0.9, scale_y=1.0),
            rule("height_fractal", "turbulence", family_id=3, operation=3, scale_y=0.2),
        ]),
    ]),
    layer("crater (subtract, ease-in)", [
        rule("circle", "crater rim", center_x=-900.0, center_z=-800.0, radius=420.0, feather_type=1, feather_amount=0.6),
        rule("height_constant", "dig", operation=2, height=60.0),
    ]),
    layer("mesa (polygon, terraces)", [
        rule("polygon", "mesa outline", points=pts((-1500, 600), (-700, 900), (-500, 1500), (-1300, 1700), (-1700, 1100)),
             feather_type=0, feather_distance=120.0, water_enabled=False, water_height=0.0, water_shader_size=2.0,
             water_type=0, water_shader=""),
        rule("height_constant", "raise", operation=1, height=90.0),
        rule("height_terrace", "terraces", flat_ratio=0.3, terrace_height=25.0),
    ]),
    layer("town (rectangle, flatten)", [
        rule("rectangle", "town", x0=300.0, z0=-1300.0, x1=900.0, z1=-900.0, feather_type=3, feather_amount=0.4,
             water={"enabled": False, "use_global_height": False, "height": 0.0, "shader_size": 2.0, "shader": ""}, water_type=0),
        rule("height_constant", "flatten", operation=0, height=40.0),
        rule("shader_constant", "paving", family_id=2, use_feather_clamp_override=True, feather_clamp_override=0.5),
        rule("flora_collidable", "clear", family_id=1, add=False, remove_all=True, use_density_override=False, density_override=0.0),
        rule("exclude", "no flora"),
    ]),
    layer("canyon (polyline, linear)", [
        rule("polyline", "canyon", version=3, points=pts((-1900, -200), (-1000, -300), (-200, 100), (600, 0), (1900, 300)),
             feather_type=0, feather_amount=0.7, width=70.0),
        rule("height_constant", "carve", operation=3, height=0.4),
    ]),
    layer("lowlands (height filter)", [
        rule("filter_height", "below 20 m", low=-200.0, high=20.0, feather_type=0, feather_amount=0.2),
        rule("shader_constant", "sand", family_id=3, use_feather_clamp_override=False, feather_clamp_override=1.0),
    ]),
    layer("peaks (inverted filter)", [
        rule("filter_height", "not below 110 m", low=-500.0, high=110.0, feather_type=0, feather_amount=0.1),
        rule("shader_constant", "rock", family_id=2, use_feather_clamp_override=False, feather_clamp_override=1.0),
    ], invert_filters=True),
    layer("outside the ridge zone (inverted boundary)", [
        rule("circle", "ridge zone", center_x=900.0, center_z=700.0, radius=1100.0, feather_type=0, feather_amount=0.3),
        rule("height_fractal", "dunes (turbulence, bias+gain)", family_id=4, operation=1, scale_y=15.0),
    ], invert_boundaries=True),
    layer("disabled layer (ignored)", [
        rule("height_constant", "would flood", operation=0, height=-1000.0),
    ], enabled=False),
]

demo = terrain("trnbake demo terrain", 4096, demo_layers, water=5.0, fractals=[
    fractal(1, "hills (add)", 7, 0, octaves=4, freq=0.002),
    fractal(2, "ridges (crest)", 11, 2, octaves=3, freq=0.006, offset=(13.5, -7.25)),
    fractal(3, "rough (turbulence)", 12345, 3, octaves=2, freq=0.02, fz=0.03),
    fractal(4, "dunes (multiply, bias, gain)", 99, 1, octaves=2, freq=0.01, bias=0.6, gain=0.7),
])

# ---------------------------------------------------------------------------------------------
# boundaries: every boundary tag and version × every feather type, on a flat base so each
# shape's falloff is what the image shows. A 5 × 5 grid of 512 m cells on a 2560 m map.

water_off = {"enabled": False, "use_global_height": False, "height": 0.0, "shader_size": 2.0, "shader": ""}


def circle(name, c, r, ft, fa, **kw):
    return rule("circle", name, center_x=c[0], center_z=c[1], radius=float(r), feather_type=ft, feather_amount=fa, **kw)


def rect(name, c, hx, hz, ft, fa, reverse=False, **kw):
    x0, z0, x1, z1 = c[0] - hx, c[1] - hz, c[0] + hx, c[1] + hz
    if reverse:  # corners stored in the wrong order: readers must normalise them
        x0, x1, z0, z1 = x1, x0, z1, z0
    return rule("rectangle", name, x0=x0, z0=z0, x1=x1, z1=z1, feather_type=ft, feather_amount=fa, **kw)


def polygon(name, c, offsets, ft, dist, v7, water=None):
    w = water or {"enabled": False, "height": 0.0, "shader": ""}
    fields = dict(points=pts(*[(c[0] + dx, c[1] + dz) for dx, dz in offsets]), feather_type=ft, feather_distance=float(dist),
                  water_enabled=w["enabled"], water_height=w["height"], water_shader_size=2.0)
    if v7:
        fields["water_type"] = w.get("type", 0)
    fields["water_shader"] = w["shader"]
    return rule("polygon", name, **fields)


def polyline(name, c, offsets, ft, fa, width, version):
    return rule("polyline", name, version=version, points=pts(*[(c[0] + dx, c[1] + dz) for dx, dz in offsets]),
                feather_type=ft, feather_amount=fa, width=float(width))


pentagon = [(-200, -180), (190, -150), (120, 60), (200, 210), (-170, 170)]  # concave at (120, 60)
star = [(0, 230), (60, 60), (230, 60), (90, -40), (150, -220), (0, -100), (-150, -220), (-90, -40), (-230, 60), (-60, 60)]
bowtie = [(-200, -200), (200, 200), (200, -200), (-200, 200)]  # self-intersecting: even-odd decides
zigzag = [(-220, -150), (-80, 150), (60, -150), (220, 150)]

b_layers = [layer("flat base", [rule("height_constant", "base", operation=0, height=10.0)])]
for i, (ft, fa) in enumerate([(0, 0.5), (1, 0.6), (2, 0.7), (3, 1.0)]):
    b_layers.append(layer(f"BCIR feather {ft}", [circle("circle", cell(i, 0), 220, ft, fa), add(50)]))
b_layers += [
    layer("BREC 0002 feather 0", [rect("rectangle", cell(0, 1), 200, 140, 0, 0.3), add(50)]),
    layer("BREC 0003 feather 1 (water, corners reversed)", [
        rect("rectangle", cell(1, 1), 150, 210, 1, 0.5, reverse=True,
             water={"enabled": True, "use_global_height": False, "height": 30.0, "shader_size": 2.0, "shader": "wter_a"}),
        add(50)]),
    layer("BREC 0004 feather 2 (lava)", [
        rect("rectangle", cell(2, 1), 210, 210, 2, 0.8,
             water={"enabled": True, "use_global_height": False, "height": 45.0, "shader_size": 4.0, "shader": "wter_lava_a"},
             water_type=1),
        add(50)]),
    layer("BREC 0002 feather 3 (amount above 1 is clamped)", [rect("rectangle", cell(3, 1), 180, 180, 3, 1.5), add(50)]),
    layer("BPOL 0005 feather 0", [polygon("polygon", cell(0, 2), pentagon, 0, 60.0, False), add(50)]),
    layer("BPOL 0007 feather 1 (water)", [
        polygon("polygon", cell(1, 2), pentagon, 1, 90.0, True, water={"enabled": True, "height": 35.0, "shader": "wter_b", "type": 0}),
        add(50)]),
    layer("BPOL 0005 feather 2 (no feather distance)", [polygon("polygon", cell(2, 2), star, 2, 0.0, False), add(50)]),
    layer("BPOL 0007 feather 3", [polygon("polygon", cell(3, 2), star, 3, 150.0, True), add(50)]),
    layer("BPLN 0001 feather 0", [polyline("polyline", cell(0, 3), zigzag, 0, 0.5, 40, 1), add(50)]),
    layer("BPLN 0003 feather 1", [polyline("polyline", cell(1, 3), zigzag, 1, 0.3, 60, 3), add(50)]),
    layer("BPLN 0001 feather 2", [polyline("polyline", cell(2, 3), zigzag, 2, 1.0, 30, 1), add(50)]),
    layer("BPLN 0003 feather 3 (no feather)", [polyline("polyline", cell(3, 3), zigzag, 3, 0.0, 50, 3), add(50)]),
    # Combinations: the last row and column.
    layer("two circles (maximum) and a disabled one", [
        circle("west", (cell(0, 4)[0] - 80, cell(0, 4)[1]), 150, 0, 1.0),
        circle("east", (cell(0, 4)[0] + 80, cell(0, 4)[1]), 150, 3, 0.8),
        circle("disabled", cell(1, 4), 200, 0, 0.0, enabled=False),
        add(50)]),
    layer("cell with an inverted ring", [
        cell_rect(1, 4),
        layer("inverted circle", [circle("hole", cell(1, 4), 160, 2, 0.5), add(40)], invert_boundaries=True),
    ]),
    layer("nested amounts", [
        circle("outer", cell(2, 4), 240, 3, 0.9),
        add(20, "outer raise"),
        layer("child rectangle", [
            rect("inner", cell(2, 4), 200, 90, 1, 0.6),
            add(30, "child raise"),
            layer("grandchild polyline", [polyline("cross", cell(2, 4), [(0, -230), (0, 230)], 0, 0.8, 60, 3), add(25)]),
        ]),
    ]),
    layer("unknown feather type 7 contributes 0", [
        circle("feather 7", cell(3, 4), 220, 7, 0.5),
        circle("small", (cell(3, 4)[0] + 100, cell(3, 4)[1] + 100), 80, 0, 0.5),
        add(50)]),
    layer("hard edges", [
        circle("no feather", (cell(4, 4)[0] - 120, cell(4, 4)[1]), 100, 0, 0.0),
        rect("no feather", (cell(4, 4)[0] + 120, cell(4, 4)[1]), 90, 150, 2, 0.0),
        add(50)]),
    layer("all four kinds (maximum)", [
        circle("c", (cell(4, 0)[0] - 120, cell(4, 0)[1] - 120), 110, 0, 0.5),
        rect("r", (cell(4, 0)[0] + 120, cell(4, 0)[1] - 120), 100, 100, 1, 0.5),
        polygon("p", (cell(4, 0)[0] - 120, cell(4, 0)[1] + 120), [(-100, -100), (100, -100), (0, 110)], 2, 40.0, True),
        polyline("l", (cell(4, 0)[0] + 120, cell(4, 0)[1] + 120), [(-100, 0), (100, 0)], 3, 0.5, 40, 1),
        add(50)]),
    layer("self-intersecting polygon (even-odd)", [polygon("bowtie", cell(4, 1), bowtie, 0, 50.0, False), add(50)]),
    layer("disabled layer with boundaries", [circle("c", cell(4, 2), 200, 0, 0.0), add(500)], enabled=False),
    layer("subtract inside an eased circle", [
        circle("c", cell(4, 3), 230, 1, 0.7),
        rule("height_constant", "dig", operation=2, height=40.0)]),
]
boundaries = terrain("trnbake golden: boundaries", 2560, b_layers, fractals=[])

# ---------------------------------------------------------------------------------------------
# filters: FHGT, FFRA (every combination rule), FSLP/FDIR/FSHD (0 in the height pass), height
# fractals with every operation and with bias and gain, terraces and constants, on a rolling
# base, in a 5 × 5 grid of 512 m cells on a 2560 m map.

f_fractals = [
    fractal(1, "base (add)", 5, 0, octaves=4, freq=0.0025),
    fractal(2, "multiply", 21, 1, octaves=3, freq=0.006),
    fractal(3, "crest", 22, 2, octaves=3, freq=0.008),
    fractal(4, "turbulence", 23, 3, octaves=2, freq=0.01, fz=0.02),
    fractal(5, "crest clamp", 24, 4, octaves=3, freq=0.007, offset=(3.25, -11.5)),
    fractal(6, "turbulence clamp", 25, 5, octaves=4, freq=0.005, multiplier=2.0, amplitude=0.6),
    fractal(7, "add, bias", 26, 0, octaves=3, freq=0.009, bias=0.3),
    fractal(8, "multiply, gain", 27, 1, octaves=3, freq=0.009, gain=0.8),
    fractal(9, "crest clamp, bias and gain", 28, 4, octaves=2, freq=0.012, bias=0.7, gain=0.25),
    fractal(10, "turbulence clamp, offsets", 29, 5, octaves=5, freq=0.004, fz=0.0065, offset=(-40.0, 17.0), bias=0.55),
]

f_layers = [layer("rolling base", [rule("height_fractal", "base", family_id=1, operation=0, scale_y=120.0)])]
for i, (ft, fa) in enumerate([(0, 0.3), (1, 0.5), (2, 0.8), (3, 0.0)]):
    f_layers.append(layer(f"FHGT feather {ft}", [
        cell_rect(i, 0), rule("filter_height", "40..90 m", low=40.0, high=90.0, feather_type=ft, feather_amount=fa), add(25)]))
for i, (fam, ft, fa, lo, hi, sy) in enumerate([(3, 0, 0.4, 0.3, 0.9, 1.0), (4, 1, 0.6, 0.1, 0.5, 1.0),
                                               (5, 2, 0.5, 0.2, 0.8, 1.0), (6, 3, 0.3, 0.2, 1.4, 2.0)]):
    f_layers.append(layer(f"FFRA feather {ft} on family {fam}", [
        cell_rect(i, 1), rule("filter_fractal", "mask", family_id=fam, feather_type=ft, feather_amount=fa, low=lo, high=hi, scale_y=sy),
        add(30)]))
for i, (fam, op, sy) in enumerate([(7, 0, 90.0), (8, 1, 40.0), (9, 2, 35.0), (10, 3, 0.6)]):
    f_layers.append(layer(f"AHFR operation {op} on family {fam}", [
        cell_rect(i, 2), rule("height_fractal", "fractal", family_id=fam, operation=op, scale_y=sy)]))
f_layers += [
    layer("FSLP gates a height affector (0 in the height pass)", [
        cell_rect(0, 3), rule("filter_slope", "steep", low=10.0, high=80.0, feather_type=0, feather_amount=0.2), add(200)]),
    layer("FDIR gates a height affector (0 in the height pass)", [
        cell_rect(1, 3), rule("filter_direction", "south-facing", low=-45.0, high=45.0, feather_type=1, feather_amount=0.0), add(200)]),
    layer("FSHD gates a height affector (0 in the height pass)", [
        cell_rect(2, 3), rule("filter_shader", "on rock", family_id=2), add(200)]),
    layer("two filters (minimum), inverted", [
        cell_rect(3, 3),
        rule("filter_height", "20..100 m", low=20.0, high=100.0, feather_type=0, feather_amount=0.5),
        rule("filter_fractal", "patches", family_id=2, feather_type=3, feather_amount=0.5, low=0.3, high=0.7, scale_y=1.0),
        rule("height_constant", "halve", operation=3, height=0.5)], invert_filters=True),
    layer("disabled filter is ignored", [
        cell_rect(4, 3), rule("filter_height", "never", low=1000.0, high=2000.0, feather_type=0, feather_amount=0.0, enabled=False),
        add(35)]),
]
for i, (ratio, th) in enumerate([(0.2, 12.0), (0.5, 25.0), (0.9, 8.0)]):
    f_layers.append(layer(f"AHTR flat ratio {ratio}", [cell_rect(i, 4), rule("height_terrace", "terraces", flat_ratio=ratio, terrace_height=th)]))
f_layers.append(layer("AHTR below 0 m (floor, not truncation)", [
    cell_rect(3, 4), rule("height_constant", "sink", operation=2, height=150.0),
    rule("height_terrace", "terraces", flat_ratio=0.35, terrace_height=20.0)]))
for j, (op, h) in enumerate([(0, 70.0), (1, 30.0), (2, 45.0)]):
    f_layers.append(layer(f"AHCN operation {op}", [cell_rect(4, j), rule("height_constant", "constant", operation=op, height=h)]))
f_layers.append(layer("AHCN operation 3 in an eased circle", [
    circle("c", cell(4, 4), 200, 3, 0.6), rule("height_constant", "scale", operation=3, height=1.6)]))
filters = terrain("trnbake golden: filters, fractals and height affectors", 2560, f_layers, f_fractals)

# ---------------------------------------------------------------------------------------------
# bitmap: FBIT 0000 (with and without the community gain) and 0001, every feather type, the
# extent rule (union of the boundaries with non-zero influence, or the whole map), two TGA
# encodings (uncompressed bottom-up, RLE top-down). Baked with and without the gain.


def mask_pixels(w, h):
    """Row 0 = bottom. A diagonal ramp with a bright disc and a dark bar: every quadrant differs."""
    rows = []
    for y in range(h):
        row = []
        for x in range(w):
            v = (x * 255 // (w - 1) + y * 255 // (h - 1)) // 2
            if (x - w * 0.7) ** 2 + (y - h * 0.65) ** 2 < (min(w, h) * 0.2) ** 2:
                v = 250
            if h * 0.2 <= y < h * 0.3 and x > w * 0.15:
                v = 10
            row.append(v)
        rows.append(row)
    return rows


def tga_grey(rows, rle=False, top_origin=False):
    h, w = len(rows), len(rows[0])
    head = struct.pack("<BBB5sHHHHBB", 0, 0, 11 if rle else 3, b"\0" * 5, 0, 0, w, h, 8, 0x20 if top_origin else 0)
    stored = list(reversed(rows)) if top_origin else rows
    flat = [v for r in stored for v in r]
    if not rle:
        return head + bytes(flat)
    out = bytearray()
    i = 0
    while i < len(flat):
        n = 1
        while i + n < len(flat) and n < 128 and flat[i + n] == flat[i]:
            n += 1
        if n > 1:
            out += bytes([0x80 | (n - 1), flat[i]])
            i += n
        else:
            j = i + 1
            while j < len(flat) and j - i < 128 and (j + 1 >= len(flat) or flat[j + 1] != flat[j]):
                j += 1
            out += bytes([j - i - 1]) + bytes(flat[i:j])
            i = j
    return head + bytes(out)


def tga_ramp(colours):
    """A 64 × 1 true-colour colour ramp (swg-trn §3.7): B, G, R."""
    head = struct.pack("<BBB5sHHHHBB", 0, 0, 2, b"\0" * 5, 0, 0, len(colours), 1, 24, 0)
    return head + bytes(c for r, g, b in colours for c in (b, g, r))


def write_bytes(rel, data):
    path = os.path.join(HERE, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    print("wrote", rel)


bm_layers = [
    layer("base", [rule("height_fractal", "hills", family_id=1, operation=0, scale_y=30.0)]),
    layer("FBIT 0001 with gain, linear, in a rectangle", [
        rule("rectangle", "extent", x0=-480.0, z0=-480.0, x1=-40.0, z1=-40.0, feather_type=0, feather_amount=0.0),
        rule("filter_bitmap", "mask", version=1, family_id=1, feather_type=0, feather_amount=0.2, low=0.1, high=1.0, gain=-0.2),
        rule("height_constant", "plateau", operation=0, height=60.0)]),
    layer("FBIT 0000 without gain, ease-in, in a circle (RLE top-down TGA)", [
        circle("extent", (250.0, -250.0), 220, 0, 0.2),
        rule("filter_bitmap", "mask", version=0, family_id=2, feather_type=1, feather_amount=0.5, low=0.05, high=0.95),
        add(40)]),
    layer("FBIT 0000 with gain, ease-out, over two rectangles (extent = union of the active ones)", [
        rule("rectangle", "west", x0=-480.0, z0=40.0, x1=-250.0, z1=480.0, feather_type=0, feather_amount=0.0),
        rule("rectangle", "east", x0=-200.0, z0=200.0, x1=-40.0, z1=480.0, feather_type=0, feather_amount=0.0),
        rule("filter_bitmap", "mask", version=0, family_id=1, feather_type=2, feather_amount=0.6, low=0.0, high=1.0, gain=0.3),
        rule("height_fractal", "bumps", family_id=2, operation=1, scale_y=30.0)]),
    layer("FBIT 0001 without boundaries (extent = the map), ease-in-out", [
        rule("filter_bitmap", "mask", version=1, family_id=2, feather_type=3, feather_amount=0.5, low=0.55, high=1.0, gain=0.1),
        add(15)]),
]
bitmap = terrain("trnbake golden: bitmap filters", 1024, bm_layers,
                 fractals=[fractal(1, "hills", 31, 0, octaves=3, freq=0.006), fractal(2, "bumps", 32, 3, octaves=2, freq=0.02)],
                 bitmaps=[{"id": 1, "name": "mask", "path": "terrain/golden_mask.tga"},
                          {"id": 2, "name": "mask (RLE, top-down)", "path": "terrain/golden_mask_rle.tga"}])

# ---------------------------------------------------------------------------------------------
# roads_water: roads and rivers of every version (baked with roads on), a ribbon, local water
# tables on rectangles and polygons, and a global water table.


def profile(points, heights, step=8.0):
    """HDTA: per control segment, (x, height, z) samples about every `step` metres, ends included."""
    segs = []
    for (x0, z0), (x1, z1), (h0, h1) in zip(points, points[1:], zip(heights, heights[1:])):
        n = max(1, int(round(((x1 - x0) ** 2 + (z1 - z0) ** 2) ** 0.5 / step)))
        segs.append([{"a": x0 + (x1 - x0) * k / n, "b": h0 + (h1 - h0) * k / n, "c": z0 + (z1 - z0) * k / n} for k in range(n + 1)])
    return segs


def road(name, points, heights, width, ft, fa, fixed=None):
    fields = dict(segments=profile(points, heights), points=pts(*points))
    if fixed is not None:
        fields["heights"] = fixed
    fields.update(width=float(width), family_id=2, height_feather_type=ft, height_feather_amount=fa,
                  shader_feather_type=0, shader_feather_amount=0.5)
    if fixed is not None:
        fields["has_fixed_heights"] = bool(fixed)
    return rule("road", name, **fields)


def river(name, points, heights, v6):
    fields = dict(segments=profile(points, heights), points=pts(*points), width=30.0, bank_family_id=3, bottom_family_id=2,
                  feather_type=3, feather_amount=0.5, trench_depth=3.0, velocity=1.0, has_local_water_table=True,
                  water_depth=1.5, water_width=20.0, water_shader_size=2.0, water_shader="wter_river")
    if v6:
        fields["water_type"] = 0
    return rule("river", name, **fields)


rw_layers = [
    layer("base", [rule("height_fractal", "hills", family_id=1, operation=0, scale_y=40.0)]),
    layer("roads", [
        road("AROA 0005 (profile)", [(-480, -400), (-150, -300), (100, -420)], [22.0, 30.0, 18.0], 16, 0, 0.5),
        road("AROA 0006 fixed heights", [(-450, 100), (-100, 180), (200, 60)], [10.0, 25.0, 15.0], 20, 1, 0.4, fixed=[30.0, 10.0, 25.0]),
        road("AROA 0006 without fixed heights", [(150, 420), (300, 150), (470, 100)], [35.0, 20.0, 28.0], 12, 2, 1.0, fixed=[]),
    ]),
    layer("rivers", [
        river("ARIV 0005", [(-480, 300), (-250, 420), (0, 330)], [8.0, 6.0, 4.0], False),
        river("ARIV 0006", [(120, -100), (300, -250), (480, -200)], [12.0, 9.0, 7.0], True),
        rule("ribbon", "ARIB 0005 (no height)", points=[{"a": -300.0, "b": -100.0, "c": 20.0}, {"a": -100.0, "b": -50.0, "c": 18.0}],
             width=10.0, water_shader_size=2.0, velocity=0.5, cap_width=4.0, terrain_family_id=2, terrain_feather_type=0,
             terrain_feather_amount=0.5, water_shader="wter_lava_a", water_type=1),
    ]),
    layer("road fading out in an eased circle", [
        circle("fade", (330.0, -420.0), 160, 1, 0.8),
        road("AROA 0005 faded", [(200, -480), (460, -330)], [12.0, 16.0], 24, 3, 0.3),
    ]),
    layer("local water tables", [
        rect("pond", (-300.0, -20.0), 90, 60, 0, 0.0,
             water={"enabled": True, "use_global_height": False, "height": 18.0, "shader_size": 2.0, "shader": "wter_pond"}),
        polygon("lake", (350.0, 300.0), [(-90, -60), (80, -80), (110, 50), (-60, 90)], 0, 20.0, True,
                water={"enabled": True, "height": 24.0, "shader": "wter_lake", "type": 0}),
        polygon("old lake", (0.0, 0.0), [(-40, -40), (40, -40), (0, 50)], 0, 10.0, False,
                water={"enabled": True, "height": 20.0, "shader": "wter_old"}),
        rule("height_constant", "basins", operation=2, height=6.0)]),
]
roads_water = terrain("trnbake golden: roads, rivers and water", 1024, rw_layers, water=12.0,
                      fractals=[fractal(1, "hills", 41, 0, octaves=3, freq=0.005)])

# ---------------------------------------------------------------------------------------------
# surfaces: every shader, flora, radial, environment, colour, exclude and passable affector,
# gated by every filter kind. The height pass ignores them (their layers hold no height
# affector); the height golden guards that, and the splat/flora/colour maps will be added to
# this fixture's `maps` when trnbake bakes them.

flora_child = {"appearance": "appearance/tree_a.apt", "weight": 1.0, "should_sway": False, "displacement": 0.0, "period": 0.0,
               "align_to_terrain": False, "should_scale": True, "min_scale": 0.8, "max_scale": 1.2}
radial_child = {"shader": "grass_blade", "weight": 1.0, "distance": 20.0, "min_width": 0.5, "max_width": 1.0, "min_height": 0.5,
                "max_height": 1.0, "maintain_aspect_ratio": True, "should_sway": True, "displacement": 0.1, "period": 2.0,
                "align_to_terrain": True, "create_plus": False}
s_layers = [
    layer("base", [
        rule("height_fractal", "hills", family_id=1, operation=0, scale_y=80.0),
        rule("height_terrace", "steps", flat_ratio=0.6, terrace_height=15.0),
        rule("shader_constant", "grass", family_id=1, use_feather_clamp_override=False, feather_clamp_override=1.0),
        rule("environment", "meadow", family_id=1, use_feather_clamp_override=False, feather_clamp_override=1.0),
        rule("color_constant", "tint", operation=0, color=[128, 128, 128]),
    ]),
    layer("rock on slopes", [
        rule("filter_slope", "steep", low=25.0, high=90.0, feather_type=0, feather_amount=0.3),
        rule("shader_constant", "rock", family_id=2, use_feather_clamp_override=True, feather_clamp_override=0.4),
        rule("flora_collidable", "boulders", family_id=2, add=True, remove_all=False, use_density_override=True, density_override=0.3),
    ]),
    layer("sand low down", [
        rule("filter_height", "below 20 m", low=-100.0, high=20.0, feather_type=1, feather_amount=0.4),
        rule("shader_replace", "grass to sand", source_family_id=1, destination_family_id=3, use_feather_clamp_override=False,
             feather_clamp_override=1.0),
        rule("color_ramp_height", "ramp by height", operation=1, low=0.0, high=80.0, ramp="colorramp/golden_ramp.tga"),
    ]),
    layer("north-facing moss", [
        rule("filter_direction", "north", low=-140.0, high=140.0, feather_type=2, feather_amount=0.2),
        rule("shader_constant", "moss", family_id=5, use_feather_clamp_override=False, feather_clamp_override=1.0),
        rule("environment", "damp", family_id=2, use_feather_clamp_override=True, feather_clamp_override=0.5),
    ]),
    layer("forest patches", [
        rule("filter_fractal", "patches", family_id=2, feather_type=3, feather_amount=0.4, low=0.5, high=1.0, scale_y=1.0),
        rule("flora_collidable", "trees", family_id=1, add=True, remove_all=False, use_density_override=False, density_override=1.0),
        rule("flora_non_collidable", "bushes", family_id=3, add=True, remove_all=False, use_density_override=True, density_override=0.5),
        rule("flora_radial_near", "grass", family_id=1, add=True, remove_all=False, use_density_override=False, density_override=1.0),
        rule("flora_radial_far", "far grass", family_id=2, add=True, remove_all=False, use_density_override=True, density_override=0.7),
        rule("color_ramp_fractal", "ramp by fractal", family_id=2, operation=3, ramp="colorramp/golden_ramp.tga"),
    ]),
    layer("no bushes on rock", [
        rule("filter_shader", "on rock", family_id=2),
        rule("flora_non_collidable", "remove bushes", family_id=3, add=False, remove_all=False, use_density_override=False,
             density_override=0.0),
    ]),
    layer("town", [
        rule("rectangle", "town", x0=-150.0, z0=-150.0, x1=150.0, z1=100.0, feather_type=0, feather_amount=0.2),
        rule("shader_constant", "paving", family_id=4, use_feather_clamp_override=False, feather_clamp_override=1.0),
        rule("flora_collidable", "clear", family_id=1, add=False, remove_all=True, use_density_override=False, density_override=0.0),
        rule("flora_radial_near", "clear grass", family_id=1, add=False, remove_all=True, use_density_override=False, density_override=0.0),
        rule("exclude", "no objects"),
        rule("passable", "walls", passable=0, feather_threshold=0.5),
        rule("color_constant", "dust", operation=2, color=[20, 10, 0]),
    ]),
    layer("path", [
        polyline("path", (0.0, 0.0), [(-480, 300), (-150, 100), (150, 200), (480, -50)], 0, 0.5, 6, 3),
        rule("flora_radial_far", "clear far grass", family_id=2, add=False, remove_all=True, use_density_override=False,
             density_override=0.0),
        rule("passable", "path", passable=1, feather_threshold=0.1),
        rule("color_constant", "worn", operation=3, color=[200, 190, 170]),
    ]),
]
surfaces = terrain(
    "trnbake golden: surface affectors", 1024, s_layers,
    fractals=[fractal(1, "hills", 51, 0, octaves=4, freq=0.004), fractal(2, "patches", 52, 2, octaves=3, freq=0.01)],
    shaders=("grass", "rock", "sand", "paving", "moss"),
    flora_fams=[{"id": i, "name": n, "color": [20, 90 + 30 * i, 20], "density": d, "floats": False, "children": [flora_child]}
                for i, n, d in [(1, "trees", 0.6), (2, "boulders", 0.2), (3, "bushes", 0.8)]],
    radial_fams=[{"id": i, "name": n, "color": [80, 160, 60], "density": d, "children": [radial_child]}
                 for i, n, d in [(1, "grass", 1.0), (2, "far grass", 0.5)]],
    env_fams=[{"id": 1, "name": "meadow", "color": [100, 200, 100], "feather_clamp": 1.0},
              {"id": 2, "name": "damp", "color": [60, 120, 140], "feather_clamp": 1.0}])

write_json("demo.json", demo)
write_json("boundaries.json", boundaries)
write_json("filters.json", filters)
write_json("bitmap.json", bitmap)
write_json("roads_water.json", roads_water)
write_json("surfaces.json", surfaces)
write_bytes("data/terrain/golden_mask.tga", tga_grey(mask_pixels(64, 40)))
write_bytes("data/terrain/golden_mask_rle.tga", tga_grey(mask_pixels(32, 32), rle=True, top_origin=True))
write_bytes("data/colorramp/golden_ramp.tga", tga_ramp([(4 * i, 255 - 4 * i, 128) for i in range(64)]))
