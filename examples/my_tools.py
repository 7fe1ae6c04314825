"""An example plugin module: each @capability function becomes a capability Flora can run."""

from capabilities.base import capability


@capability(
    name="convert_temperature",
    description="Convert a temperature between Celsius and Fahrenheit.",
    parameters={
        "type": "object",
        "properties": {
            "value": {"type": "number", "description": "the temperature to convert, e.g. 21.5"},
            "to": {"type": "string", "enum": ["celsius", "fahrenheit"],
                   "description": "the unit to convert to: celsius or fahrenheit"},
        },
        "required": ["value", "to"],
        "additionalProperties": False,
    },
    keywords=("temperature", "温度"),
    examples=("how warm is 20 C in F?", "100华氏度是多少摄氏度"),
)
def convert_temperature(value: float, to: str) -> dict:
    converted = value * 9 / 5 + 32 if to == "fahrenheit" else (value - 32) * 5 / 9
    return {"value": round(converted, 2), "unit": to}
