"""Multi-control and multi-output actuators (MuJoCo >= 3.11: ``nu``, the
controls, and ``nout``, the force outputs, differ from ``nactuator``), each
between two plain motors so that its controls and outputs shift theirs, with
actuatorpos/actuatorvel sensors on all three and on a plain motor of a free
joint. The forms and the first release that compiles each were checked on
every supported release."""

from __future__ import annotations

import mujoco

from .edge_models import version_at_least

_BASE = """<mujoco model="{name}"><worldbody>
 <site name="ref" pos="0 0 1"/>
 <body name="b" pos="0 0 1"><joint name="hinge" axis="1 0 0"/>
  <geom type="capsule" fromto="0 0 0 0 0 -.3" size=".05"/>
  <body name="c" pos="0 0 -.3"><joint name="ball" type="ball"/>
   <geom type="box" size=".05 .05 .1" pos="0 0 -.1"/><site name="tip" pos="0 0 -.2"/></body></body>
 <body name="f" pos="1 0 1"><freejoint name="free"/><geom size=".1"/></body>
 </worldbody>
 <tendon><fixed name="ft"><joint joint="hinge" coef="2"/></fixed></tendon>
 <actuator><motor name="first" joint="hinge" gear="3"/>{actuator}
  <motor name="last" tendon="ft" gear="-2"/></actuator>
 <sensor><actuatorpos name="first_pos" actuator="first"/>
  <actuatorvel name="first_vel" actuator="first"/>
  <actuatorpos name="multi_pos" actuator="multi"/><actuatorvel name="multi_vel" actuator="multi"/>
  <actuatorpos name="last_pos" actuator="last"/><actuatorvel name="last_vel" actuator="last"/>
  <framepos name="tip_pos" objtype="site" objname="tip"/></sensor></mujoco>"""

#: name -> (first release (major, minor) that compiles it, the actuator element).
FORMS: dict[str, tuple[tuple[int, int], str]] = {
    # SO(3) transmission: 3 controls (or 4 with input="quat"), 3 force outputs
    "orientation_ball": ((3, 11), '<orientation name="multi" joint="ball" kp="10"/>'),
    "orientation_ball_quat": (
        (3, 11),
        '<orientation name="multi" joint="ball" kp="10" input="quat"/>',
    ),
    "orientation_site": ((3, 11), '<orientation name="multi" site="tip" refsite="ref" kp="10"/>'),
    "general_so3": (
        (3, 11),
        '<general name="multi" joint="ball" gaintype="so3" biastype="so3" gainprm="10" '
        'biasprm="0 -10 -1"/>',
    ),
    # several controls, one output (a joint transmission)
    "pid": ((3, 12), '<pid name="multi" joint="hinge" kp="10" kv="1" input="pos vel ff"/>'),
    "dcmotor": (
        (3, 12),
        '<dcmotor name="multi" joint="hinge" motorconst="0.1" resistance="1" '
        'input="pos vel ff voltage" controller="1 0 0.1 0 0 10"/>',
    ),
}

#: The sensors of every form's model.
SENSORS = ["first_pos", "first_vel", "multi_pos", "multi_vel", "last_pos", "last_vel", "tip_pos"]


def available(name: str) -> bool:
    """Whether the installed MuJoCo compiles form `name`."""
    return version_at_least(*FORMS[name][0])


def model(name: str) -> mujoco.MjModel:
    """The model of form `name` (see FORMS)."""
    return mujoco.MjModel.from_xml_string(_BASE.format(name=name, actuator=FORMS[name][1]))
