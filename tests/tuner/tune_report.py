"""What the tuner's shell tests read of `syncopate tune --json`: the report (the file may hold
lines before its JSON), and a re-run's measured step."""
import json


def report(path):
    text = open(path).read()
    return json.loads(text[text.index("{"):])


def median_step(doc):
    """The median of the modelled iterations' measured times: simgpu runs in real time, and a rank
    held off its cores long enough (other tests beside this one) leaves the device idle and
    lengthens that iteration alone."""
    steps = sorted(i["measured_ms"] for i in doc["replay_per_iteration"])
    return (steps[(len(steps) - 1) // 2] + steps[len(steps) // 2]) / 2
