"""A batch or an MjData whose model differs from the refresher's where a
refresh reads it is refused: the refresher computes with the model's values
as they were at construction (edits to the caller's model afterwards
included), its structure (joint types, object ids, camera targets) and the
values the selected sensors read (terrain under a ray, armatures for the
kinetic energy, gravity and springs for the potential energy). Fields no
selected output reads stay free to differ."""

from __future__ import annotations

import copy

import mujoco
import numpy as np
import pytest
from support.backends import other_model_message
from support.edge_models import version_at_least

import mjrefresh

ROBOT = """<mujoco><worldbody>
 <camera name="c" pos="0 -2 1" mode="targetbody" target="{target}"/>
 <body name="a" pos="0 0 1"><joint name="h" type="{joint}" axis="1 0 0" stiffness="2"/>
  <geom size=".1" friction="{friction}"/><site name="s0" pos=".2 0 0"/><site name="s1" pos="0 .3 0"/>
 </body>
 <body name="b" pos="1 0 1"><joint type="slide" axis="0 1 0"/><geom size=".1"/></body>
</worldbody>
<sensor><framepos name="p" objtype="site" objname="{site}"/>
 <framexaxis name="cx" objtype="camera" objname="c"/></sensor></mujoco>"""
ENERGY = """<mujoco><option><flag energy="enable"/></option><worldbody>
 <body name="a" pos="0 0 1"><joint name="h" axis="0 1 0" stiffness="2"/>
 <geom type="capsule" size=".05" fromto="0 0 0 .3 0 0"/></body></worldbody>
<sensor><e_kinetic name="ek"/><e_potential name="ep"/></sensor></mujoco>"""
SUBTREE = (
    int(mujoco.mjtSensor.mjSENS_SUBTREECOM),
    int(mujoco.mjtSensor.mjSENS_SUBTREELINVEL),
    int(mujoco.mjtSensor.mjSENS_SUBTREEANGMOM),
)
TERRAIN = """<mujoco><asset><hfield name="hf" nrow="8" ncol="8" size="2 2 .5 .1"/></asset>
<worldbody><geom type="hfield" hfield="hf"/>
 <body name="a" pos="0 0 1"><freejoint/><geom size=".05"/><site name="ray" zaxis="0 0 -1"/></body>
</worldbody><sensor><rangefinder name="rf" site="ray"/></sensor></mujoco>"""

# Contacts (contact sensors are of the position stage from MuJoCo 3.16) and
# an enclosed insidesite (3.15): what collision reads, a geom's whole shape.
CONTACT = """<mujoco><worldbody><geom name="floor" type="plane" size="5 5 .1"/>
 <site name="zone" type="box" size=".5 .5 .5"/>
 <body name="ball" pos="0 0 .05"><freejoint/><geom name="g" size=".1" friction="{friction}"/>
 </body></worldbody>
<sensor><contact name="c" geom1="g" data="found dist" num="1"/>{enclosed}</sensor></mujoco>"""
ENCLOSED = '<insidesite name="in" site="zone" objtype="geom" objname="g" enclosed="true"/>'


def contact(friction="1 .005 .0001", enclosed=""):
    return mujoco.MjModel.from_xml_string(CONTACT.format(friction=friction, enclosed=enclosed))


def robot(joint="hinge", site="s0", target="a", friction="1 .005 .0001"):
    return mujoco.MjModel.from_xml_string(
        ROBOT.format(joint=joint, site=site, target=target, friction=friction)
    )


def energy():
    return mujoco.MjModel.from_xml_string(ENERGY)


def terrain():
    return mujoco.MjModel.from_xml_string(TERRAIN)


def edited(build, edit):
    """A model of `build` with `edit` applied (same sizes, other values)."""
    m = build()
    edit(m)
    return m


# case: (the refresher's model, selected sensors, the other model, the field named)
OTHER = {
    "joint type": (robot, ["p"], lambda: robot(joint="slide"), "(body_simple|jnt_type)"),
    "sensor object": (robot, ["p"], lambda: robot(site="s1"), "sensor_objid"),
    "camera target": (robot, ["cx"], lambda: robot(target="b"), "cam_targetbodyid"),
    "armature": (
        energy,
        ["ek"],
        lambda: edited(energy, lambda m: m.dof_armature.__setitem__(0, 0.5)),
        "dof_armature",
    ),
    "gravity": (
        energy,
        ["ep"],
        lambda: edited(energy, lambda m: m.opt.gravity.__setitem__(2, -3)),
        r"opt\.gravity",
    ),
    "stiffness": (
        energy,
        ["ep"],
        lambda: edited(energy, lambda m: m.jnt_stiffness.__setitem__(0, 20)),
        "jnt_stiffness",
    ),
    "terrain": (
        terrain,
        ["rf"],
        lambda: edited(terrain, lambda m: m.hfield_data.__setitem__(slice(None), 0.8)),
        "hfield_data",
    ),
}

if version_at_least(3, 16):
    OTHER["contact filter"] = (
        contact,
        ["c"],
        lambda: edited(contact, lambda m: m.geom_contype.__setitem__(1, 0)),
        "geom_contype",
    )
    OTHER["contact shape"] = (
        contact,
        ["c"],
        lambda: edited(contact, lambda m: m.geom_size.__setitem__((1, 0), 0.3)),
        "geom_size",
    )
    OTHER["enclosed shape"] = (
        lambda: contact(enclosed=ENCLOSED),
        ["in"],
        lambda: edited(
            lambda: contact(enclosed=ENCLOSED), lambda m: m.geom_size.__setitem__((1, 0), 0.7)
        ),
        "geom_size",
    )


@pytest.mark.parametrize("case", sorted(OTHER))
def test_a_model_differing_where_a_refresh_reads_is_refused(case):
    ours, sensors, other, field = OTHER[case]
    r = mjrefresh.Refresher(ours(), sensors=sensors, engine="exact")
    theirs = other()
    d = mujoco.MjData(theirs)
    with pytest.raises(ValueError, match=other_model_message(field, what="datas[0]")):
        mjrefresh.bind_mjdata_list(r, [d])
    with pytest.raises(ValueError, match=other_model_message(field, what="datas[0]")):
        mjrefresh.refresh_mjdata(r, [d])
    mjbatch = pytest.importorskip("mjbatch", reason="mjbatch-uni not installed")
    with pytest.raises(ValueError, match=other_model_message(field)):
        mjrefresh.bind_mjbatch(mjbatch.Batch(theirs, 2), r)


def test_fields_no_selected_output_reads_may_differ():
    # Friction is read by contacts only.
    r = mjrefresh.Refresher(robot(), sensors=["p", "cx"], bodies=["a", "b"])
    theirs = robot(friction="0.3 .01 .001")
    d = mujoco.MjData(theirs)
    d.qpos[:] = (0.7, -0.4)
    d.qvel[:] = (0.2, 1.1)
    mujoco.mj_forward(theirs, d)
    want = d.sensordata.copy()
    d.sensordata[:] = 0
    mjrefresh.refresh_mjdata(r, [d])
    np.testing.assert_allclose(d.sensordata, want, rtol=0, atol=1e-12)


@pytest.mark.skipif(not version_at_least(3, 16), reason="contact sensors are ACC before 3.16")
def test_contact_parameters_no_contact_sensor_reads_may_differ():
    # Collision reads the geoms' shapes and filters, not the contacts'
    # solver parameters: a friction randomised per environment is accepted.
    r = mjrefresh.Refresher(contact(), sensors=["c"], engine="exact")
    theirs = contact(friction=".3 .01 .001")
    d = mujoco.MjData(theirs)
    mujoco.mj_forward(theirs, d)
    want = d.sensordata.copy()
    assert want[0] == 1  # the ball touches the floor
    d.sensordata[:] = 0
    mjrefresh.refresh_mjdata(r, [d])
    np.testing.assert_array_equal(d.sensordata, want)


TENDON = """<mujoco><worldbody><site name="anchor" pos="0 0 2"/>
 <body name="a" pos="0 0 1"><joint axis="1 0 0"/><geom name="g" size=".1"/>
  <site name="tip" pos=".3 0 0"/><site name="side" pos="0 0 .3"/></body></worldbody>
 <tendon><spatial name="t"><site site="anchor"/>{wrap}<site site="tip"/></spatial></tendon>
 <sensor><tendonpos name="len" tendon="t"/></sensor></mujoco>"""


@pytest.mark.parametrize("wrap", ["", '<geom geom="g" sidesite="side"/>'], ids=["sites", "geom"])
def test_a_geom_size_is_read_only_where_a_tendon_wraps_a_geom(wrap):
    # geom_size is a wrapping radius: a tendon between sites does not read
    # it (randomising it was refused with nothing to declare).
    refresh_a_bigger_geom(TENDON.format(wrap=wrap), "len", 0.4, size=0.2, refused=bool(wrap))


def refresh_a_bigger_geom(
    xml: str, sensor: str, qpos: float, size: float, refused: bool
) -> np.ndarray | None:
    """Refresh `sensor` in an MjData of `xml` whose geom 0 has radius `size`
    by a Refresher of `xml` as written: refused naming geom_size when
    `refused`, else equal to mj_forward (the sensordata returned)."""
    ours = mujoco.MjModel.from_xml_string(xml)
    theirs = mujoco.MjModel.from_xml_string(xml)
    theirs.geom_size[0, 0] = size
    theirs.geom_rbound[0] = max(theirs.geom_rbound[0], size)
    r = mjrefresh.Refresher(ours, sensors=[sensor], engine="exact")
    d = mujoco.MjData(theirs)
    d.qpos[:] = qpos
    if refused:
        with pytest.raises(ValueError, match=other_model_message("geom_size", what="datas[0]")):
            mjrefresh.refresh_mjdata(r, [d])
        return None
    mujoco.mj_forward(theirs, d)
    want = d.sensordata.copy()
    d.sensordata[:] = 0
    mjrefresh.refresh_mjdata(r, [d])
    np.testing.assert_array_equal(d.sensordata, want)
    return want


def test_the_values_at_construction_are_what_an_mjdata_is_compared_with():
    m = robot()
    r = mjrefresh.Refresher(m, sensors=["p"], bodies=["a"], engine="exact")
    m.body_pos[1, 2] += 0.05  # the caller randomises its model afterwards
    with pytest.raises(ValueError, match=other_model_message("body_pos", what="datas[0]")):
        mjrefresh.bind_mjdata_list(r, [mujoco.MjData(m)])  # computed with the old values
    pristine = robot()  # the values the refresher computes with
    d = mujoco.MjData(pristine)
    d.qpos[:] = (0.7, -0.4)
    mujoco.mj_forward(pristine, d)
    want = d.sensordata.copy()
    d.sensordata[:] = 0
    mjrefresh.refresh_mjdata(r, [d])
    np.testing.assert_array_equal(d.sensordata[:3], want[:3])  # p, the selected sensor


def test_frames_and_flags_no_selected_output_reads_may_differ(legged_model):
    # mj_setConst re-derives the compiled sameframe flags (a batch's
    # set_const after randomising inertias does), and a geom's or a site's
    # pose or a sensor's cutoff matters only where a selected output reads
    # it: a refresh of body poses was refused over them.
    theirs = copy.copy(legged_model)
    same = np.flatnonzero(theirs.body_sameframe == mujoco.mjtSameFrame.mjSAMEFRAME_BODY)
    # as mj_setConst re-derives it on the quadruped: a flag valid for the
    # same values (the inertial frame turns with the body)
    theirs.body_sameframe[same[0]] = mujoco.mjtSameFrame.mjSAMEFRAME_BODYROT
    d = mujoco.MjData(theirs)
    theirs.geom_pos[1] += 0.01
    theirs.site_pos[0] += 0.01
    theirs.sensor_cutoff[:] = 3.0
    r = mjrefresh.Refresher(legged_model, bodies=["base", "shin"], engine="exact")
    d.qpos[:] = legged_model.qpos0 + 0.1
    d.qvel[:] = 0.3
    mujoco.mj_forward(theirs, d)
    cache = mjrefresh.bind_mjdata_list(r, [d])
    for b in ("base", "shin"):
        np.testing.assert_array_equal(cache.body_pos(b)[0], d.xpos[legged_model.body(b).id])
    subtree = [s for s in range(legged_model.nsensor) if legged_model.sensor_type[s] in SUBTREE]
    assert subtree, "the legged model has a subtree sensor"
    with_subtree = mjrefresh.Refresher(legged_model, sensors=subtree[:1], engine="exact")
    with pytest.raises(ValueError, match=other_model_message("body_sameframe", what="datas[0]")):
        mjrefresh.bind_mjdata_list(with_subtree, [d])  # it reads the inertial frames


INSIDE = """<mujoco><worldbody><site name="zone" type="box" size=".5 .5 .5"/>
 <body name="ball" pos=".2 0 0"><joint type="slide" axis="1 0 0"/><geom name="g" size=".1"/>
 </body></worldbody>
<sensor><insidesite name="in" site="zone" objtype="geom" objname="g"{enclosed}/></sensor></mujoco>"""


@pytest.mark.skipif(
    not hasattr(mujoco.mjtSensor, "mjSENS_INSIDESITE"), reason="no insidesite sensor"
)
@pytest.mark.parametrize("enclosed", ["", ' enclosed="true"'], ids=["position", "enclosed"])
def test_an_insidesite_reads_its_geoms_shape_only_when_enclosed(enclosed):
    # Without enclosed="true" insidesite tests the object's position only:
    # a geom size randomised per environment is accepted, and equal to
    # mj_forward; an enclosed one measures the shape and refuses it.
    if enclosed and not version_at_least(3, 15):
        pytest.skip("enclosed needs MuJoCo >= 3.15")
    want = refresh_a_bigger_geom(
        INSIDE.format(enclosed=enclosed), "in", 0.1, size=0.45, refused=bool(enclosed)
    )
    assert want is None or want[0] == 1
