"""Models for the exact engine's edges: sleep, constraint-row and contact
sensors, energies, plugins, a large declared arena, dof-less frames."""

from __future__ import annotations

import mujoco

# Sleep enabled, one tree asleep at reset (MuJoCo's sleep="init").
SLEEP_XML = """<mujoco><option><flag sleep="enable"/></option><worldbody>
 <geom type="plane" size="5 5 .1"/>
 <body name="a" pos="0 0 .1" sleep="init"><freejoint/><geom type="box" size=".1 .1 .1"/>
  <site name="sa"/></body>
 <body name="b" pos="1 0 1"><joint name="h" type="hinge" range="-1 1" limited="true"/>
  <geom type="capsule" size=".05" fromto="0 0 0 0 0 -.5"/><site name="sb" pos="0 0 -.5"/></body>
 </worldbody>
 <sensor><framepos name="pa" objtype="site" objname="sa"/>
  <framepos name="pb" objtype="site" objname="sb"/><jointpos name="jp" joint="h"/>
  <velocimeter name="vb" site="sb"/><jointlimitpos name="lp" joint="h"/>
  <e_kinetic name="ek"/><touch name="tch" site="sa"/></sensor></mujoco>"""

# Contacts, joint and tendon limits (with margins, so rows exist near the
# range), spatial and fixed tendons, an adhesion actuator, energy sensors.
CONSTRAINT_XML = """<mujoco><option><flag energy="enable"/></option>
 <worldbody><geom name="floor" type="plane" size="3 3 .1"/>
 <body name="box" pos="0 0 .12"><freejoint/><geom name="boxg" type="box" size=".1 .1 .1"/>
  <site name="s0" pos=".1 0 .1"/>
  <body name="arm" pos="0 0 .1"><joint name="h1" axis="0 1 0" range="-.5 .5" margin=".2"/>
   <geom type="capsule" size=".03" fromto="0 0 0 .3 0 0"/><site name="s1" pos=".3 0 0"/>
   <body name="fore" pos=".3 0 0"><joint name="h2" axis="0 1 0" range="-.3 .8" margin=".1"/>
    <geom name="tipg" type="sphere" size=".04" pos=".2 0 0"/>
    <body name="ball" pos=".2 0 0"><joint name="bj" type="ball" range="0 .4" margin=".1"/>
     <geom size=".02" pos=".05 0 0"/></body></body></body></body>
 <body name="slider" pos=".5 .5 .05"><joint name="sl" type="slide" axis="1 0 0" range="-.1 .1"
   margin=".05"/><geom name="sg" type="sphere" size=".05"/></body>
 </worldbody>
 <tendon><spatial name="sp" limited="true" range=".2 .35" margin=".05"><site site="s0"/>
   <site site="s1"/></spatial>
  <fixed name="fx" limited="true" range="-.4 .4" margin=".1"><joint joint="h1" coef="1"/>
   <joint joint="h2" coef="-.5"/></fixed></tendon>
 <actuator><adhesion name="ad" body="box" ctrlrange="0 1" gain="5"/>
  <motor name="m1" joint="h1"/></actuator>
 <sensor>
  <jointlimitpos name="jlp1" joint="h1"/><jointlimitvel name="jlv1" joint="h1"/>
  <jointlimitpos name="jlp2" joint="h2"/><jointlimitvel name="jlv2" joint="h2"/>
  <jointlimitpos name="jlpb" joint="bj"/><jointlimitvel name="jlvb" joint="bj"/>
  <jointlimitpos name="jlps" joint="sl"/><jointlimitvel name="jlvs" joint="sl"/>
  <tendonlimitpos name="tlps" tendon="sp"/><tendonlimitvel name="tlvs" tendon="sp"/>
  <tendonlimitpos name="tlpf" tendon="fx"/><tendonlimitvel name="tlvf" tendon="fx"/>
  <actuatorpos name="adp" actuator="ad"/><actuatorvel name="adv" actuator="ad"/>
  <actuatorvel name="m1v" actuator="m1"/>
  <e_potential name="epot"/><e_kinetic name="ekin"/>
  <framepos name="fp" objtype="site" objname="s1"/><gyro name="gy" site="s1"/>
  <tendonpos name="tp" tendon="sp"/><touch name="tch" site="s0"/>
 </sensor></mujoco>"""

# MuJoCo >= 3.16: contact sensors with no force data are position- or
# velocity-stage; tactile sensors are velocity-stage.
CONTACT_SENSORS_XML = """<mujoco><worldbody><geom name="floor" type="plane" size="3 3 .1"/>
 <body name="box" pos="0 0 .1"><freejoint/><geom name="boxg" type="box" size=".1 .1 .1"/>
  <site name="s0"/></body>
 <body name="ball" pos=".3 0 .1"><freejoint/><geom name="ballg" size=".08"/></body>
 </worldbody>
 <sensor><contact name="cf" geom1="boxg" data="found dist pos normal"/>
  <contact name="cb" body1="ball" data="found dist"/>
  <contact name="cv" geom1="boxg" geom2="floor" data="found linvel angvel"/>
  <framepos name="fp" objtype="site" objname="s0"/></sensor></mujoco>"""

# MuJoCo >= 3.16 tactile sensor (velocity stage): a plate pad resting on
# two spheres, which the random states press into it.
TACTILE_XML = """<mujoco><asset>
  <mesh name="plate" builtin="plate" params="8 8" scale="0.04 0.04 0.005"/></asset>
 <worldbody>
  <body name="pad" pos="0 0 .1"><freejoint/><geom type="box" size="0.04 0.04 0.005"/>
   <geom name="surface" type="mesh" mesh="plate" contype="0" conaffinity="0"/></body>
  <body name="ball" pos="0.01 0 .06"><freejoint/><geom size=".04"/></body>
  <geom name="peg" type="capsule" size=".01" fromto="-.02 .01 .05 -.02 .01 .09"/>
 </worldbody>
 <sensor><tactile name="tac" geom="surface" mesh="plate"/>
  <framepos name="fp" objtype="body" objname="pad"/></sensor></mujoco>"""

# A sensor plugin (acceleration stage) next to an ordinary sensor.
TOUCH_GRID_XML = """<mujoco>
 <extension><plugin plugin="mujoco.sensor.touch_grid"/></extension>
 <worldbody><geom type="plane" size="1 1 .1"/>
  <body name="b" pos="0 0 .1"><freejoint/><geom type="box" size=".1 .1 .1"/>
   <site name="touch" pos="0 0 -.1" zaxis="0 0 -1"/></body></worldbody>
 <sensor>
  <plugin name="tg" plugin="mujoco.sensor.touch_grid" objtype="site" objname="touch">
   <config key="size" value="7 7"/><config key="fov" value="45 45"/><config key="gamma" value="0"/>
   <config key="nchannel" value="3"/></plugin>
  <framepos name="fp" objtype="site" objname="touch"/><velocimeter name="vel" site="touch"/>
 </sensor></mujoco>"""

# A large declared arena (<size memory>) that pose sensors never touch.
BIG_ARENA_XML = """<mujoco><size memory="64M"/><worldbody>
 <body name="a"><joint name="h" axis="0 1 0"/><geom type="capsule" size=".05" fromto="0 0 0 .3 0 0"/>
  <site name="tip" pos=".3 0 0"/></body></worldbody>
 <sensor><framepos name="fp" objtype="site" objname="tip"/><jointvel name="jv" joint="h"/></sensor>
</mujoco>"""


def version_at_least(major: int, minor: int) -> bool:
    """Whether the installed MuJoCo is at least major.minor."""
    parts = tuple(int(p) for p in mujoco.__version__.split(".")[:2])
    return parts >= (major, minor)
