#!/usr/bin/env python3
"""Author the built-in demo terrain (golden/demo.json): a 4 km map that exercises every
boundary, feather type, filter, affector and fractal combination rule trnbake evaluates.
Run it after changing the demo; `trnbake compile golden/demo.json -o demo.trn` gives the .trn."""
import json, os

def rule(kind, name, **fields):
    return {"enabled": True, "name": name, "type": kind, **fields}

def layer(name, children, invert_boundaries=False, invert_filters=False, enabled=True):
    return {"type": "layer", "enabled": enabled, "name": name, "invert_boundaries": invert_boundaries,
            "invert_filters": invert_filters, "expanded": True, "notes": "", "children": children}

def fractal(fid, name, seed, rule_, octaves=3, freq=0.004, bias=None, gain=None, offset=(0.0, 0.0), fz=None):
    return {"id": fid, "name": name, "fractal": {
        "seed": seed, "use_bias": bias is not None, "bias": bias if bias is not None else 0.5,
        "use_gain": gain is not None, "gain": gain if gain is not None else 0.5, "octaves": octaves,
        "octave_frequency_multiplier": 2.5, "amplitude": 0.45, "frequency_x": freq,
        "frequency_z": fz if fz is not None else freq, "offset_x": offset[0], "offset_z": offset[1],
        "combination_rule": rule_}}

def pts(*xz):
    return [{"x": float(x), "z": float(z)} for x, z in xz]

flora = lambda d, t, bd: {"min_distance": 0.0, "max_distance": d, "tile_size": t, "tile_border": bd, "seed": 0}

layers = [
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

terrain = {
    "version": 15,
    "header": {
        "source_file": "trnbake demo terrain", "map_width": 4096.0, "chunk_width": 8.0, "tiles_per_chunk": 2,
        "use_global_water_table": True, "global_water_height": 5.0, "global_water_shader_size": 2.0,
        "global_water_shader": "demo_water", "environment_cycle_time": 3600.0,
        "collidable_flora": flora(50.0, 16.0, 4.0), "noncollidable_flora": flora(50.0, 4.0, 1.5),
        "radial_flora": flora(28.0, 1.0, 0.48), "far_radial_flora": {**flora(500.0, 32.0, 12.0), "min_distance": 120.0},
        "legacy_map": 1,
    },
    "generator": {
        "shader_families": {"version": 6, "families": [
            {"id": i, "name": n, "surface_properties": "", "color": c, "shader_size": 2.0, "feather_clamp": 1.0,
             "children": [{"name": n + "_a", "weight": 1.0}]}
            for i, n, c in [(1, "grass", [60, 140, 50]), (2, "rock", [120, 110, 100]), (3, "sand", [220, 200, 140])]]},
        "flora_families": {"version": 8, "families": [
            {"id": 1, "name": "trees", "color": [20, 90, 20], "density": 0.6, "floats": False, "children": []}]},
        "radial_families": {"version": 4, "families": []},
        "environment_families": {"version": 2, "families": []},
        "fractal_families": {"version": 0, "families": [
            fractal(1, "hills (add)", 7, 0, octaves=4, freq=0.002),
            fractal(2, "ridges (crest)", 11, 2, octaves=3, freq=0.006, offset=(13.5, -7.25)),
            fractal(3, "rough (turbulence)", 12345, 3, octaves=2, freq=0.02, fz=0.03),
            fractal(4, "dunes (multiply, bias, gain)", 99, 1, octaves=2, freq=0.01, bias=0.6, gain=0.7),
        ]},
        "layers": layers,
    },
}

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "demo.json")
with open(out, "w") as f:
    json.dump(terrain, f, indent=1)
    f.write("\n")
print("wrote", out)
