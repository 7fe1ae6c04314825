"""The functions of bench/own_functions.py, written as a person writes tools for a language model:
type hints and a docstring, nothing else. The bench installs each one offered by a case as a
skill module of its own (this file's prelude, ``record`` included, then the function's source),
so what the function receives is what a call of it recorded. Bodies answer as a fake back-end
would: they never reach anything outside.
"""

from enum import Enum
from typing import Literal, Optional

from capabilities.base import capability

CALLS_FILE = ""  # the bench writes the file its run records calls into


def record(name: str, arguments: dict) -> dict:
    """Append the call to CALLS_FILE and answer with what was received."""
    import json

    with open(CALLS_FILE, "a", encoding="utf-8") as out:
        out.write(json.dumps({"function": name, "arguments": arguments}, ensure_ascii=False, default=str) + "\n")
    return {"function": name, "received": arguments, "status": "ok"}


# ----------------------------------------------------------------------------- geometry
@capability
def triangle_area(base: float, height: float) -> dict:
    """Compute the area of a triangle from its base and height.

    Args:
        base: length of the triangle's base
        height: height of the triangle measured from the base
    """
    return record("triangle_area", {"base": base, "height": height})


@capability
def circle_area(radius: float) -> dict:
    """Compute the area of a circle.

    Args:
        radius: the radius of the circle
    """
    return record("circle_area", {"radius": radius})


@capability
def cylinder_volume(radius: float, height: float) -> dict:
    """Compute the volume of a cylinder.

    Args:
        radius: radius of the circular base
        height: height of the cylinder
    """
    return record("cylinder_volume", {"radius": radius, "height": height})


@capability
def hypotenuse(a: float, b: float) -> dict:
    """Length of the hypotenuse of a right triangle from its two legs.

    Parameters
    ----------
    a : float
        length of the first leg
    b : float
        length of the second leg
    """
    return record("hypotenuse", {"a": a, "b": b})


@capability
def distance_between_points(x1: float, y1: float, x2: float, y2: float) -> dict:
    """Euclidean distance between two points in the plane.

    Args:
        x1: x coordinate of the first point
        y1: y coordinate of the first point
        x2: x coordinate of the second point
        y2: y coordinate of the second point
    """
    return record("distance_between_points", {"x1": x1, "y1": y1, "x2": x2, "y2": y2})


# ----------------------------------------------------------------------------- algebra and statistics
@capability
def solve_quadratic(a: float, b: float, c: float) -> dict:
    """Find the real roots of the quadratic equation a*x^2 + b*x + c = 0.

    Args:
        a: coefficient of x squared
        b: coefficient of x
        c: constant term
    """
    return record("solve_quadratic", {"a": a, "b": b, "c": c})


@capability
def mean_of(numbers: list[float]) -> dict:
    """Arithmetic mean (average) of a list of numbers.

    Args:
        numbers: the numbers to average
    """
    return record("mean_of", {"numbers": numbers})


@capability
def standard_deviation(numbers: list[float], sample: bool = False) -> dict:
    """Standard deviation of a list of numbers.

    Args:
        numbers: the data values
        sample: True for the sample standard deviation (n-1), False for the population one
    """
    return record("standard_deviation", {"numbers": numbers, "sample": sample})


@capability
def greatest_common_divisor(a: int, b: int) -> dict:
    """Greatest common divisor of two whole numbers.

    :param a: the first number
    :param b: the second number
    """
    return record("greatest_common_divisor", {"a": a, "b": b})


@capability
def is_prime(n: int) -> dict:
    """Tell whether a whole number is prime.

    Args:
        n: the number to test
    """
    return record("is_prime", {"n": n})


@capability
def factorial(n: int) -> dict:
    """Factorial of a non-negative whole number (n!).

    Args:
        n: the number
    """
    return record("factorial", {"n": n})


@capability
def binomial_probability(trials: int, successes: int, p: float) -> dict:
    """Probability of exactly k successes in n independent trials with success probability p.

    Args:
        trials: number of trials n
        successes: number of successes k
        p: probability of success in one trial, between 0 and 1
    """
    return record("binomial_probability", {"trials": trials, "successes": successes, "p": p})


# ----------------------------------------------------------------------------- finance
@capability
def compound_interest(principal: float, annual_rate: float, years: int, times_per_year: int = 1) -> dict:
    """Final amount of an investment with compound interest.

    Args:
        principal: the amount invested at the start
        annual_rate: yearly interest rate in percent (5 means 5%)
        years: how many years the money stays invested
        times_per_year: how many times per year interest is compounded
    """
    return record("compound_interest", {"principal": principal, "annual_rate": annual_rate, "years": years,
                                        "times_per_year": times_per_year})


@capability
def loan_payment(amount: float, annual_rate: float, months: int) -> dict:
    """Monthly payment of a fixed-rate loan (mortgage, car loan).

    Args:
        amount: the sum borrowed
        annual_rate: yearly interest rate in percent (4.5 means 4.5%)
        months: the number of monthly payments
    """
    return record("loan_payment", {"amount": amount, "annual_rate": annual_rate, "months": months})


@capability
def convert_currency(amount: float, from_currency: str, to_currency: str) -> dict:
    """Convert an amount of money from one currency to another at today's rate.

    Args:
        amount: the amount of money
        from_currency: ISO code of the currency the amount is in, such as USD
        to_currency: ISO code of the currency wanted, such as EUR
    """
    return record("convert_currency", {"amount": amount, "from_currency": from_currency, "to_currency": to_currency})


@capability
def split_bill(total: float, people: int, tip_percent: float = 0.0) -> dict:
    """Split a restaurant bill evenly, with an optional tip.

    Args:
        total: the bill before tip
        people: how many people share it
        tip_percent: tip in percent of the bill (15 means 15%)
    """
    return record("split_bill", {"total": total, "people": people, "tip_percent": tip_percent})


@capability
def stock_quote(symbol: str) -> dict:
    """Latest trading price of a stock.

    Args:
        symbol: the stock's ticker symbol, such as AAPL
    """
    return record("stock_quote", {"symbol": symbol})


@capability
def sales_tax(price: float, rate_percent: float) -> dict:
    """Price including sales tax.

    Args:
        price: price before tax
        rate_percent: tax rate in percent (8 means 8%)
    """
    return record("sales_tax", {"price": price, "rate_percent": rate_percent})


# ----------------------------------------------------------------------------- physics
@capability
def final_velocity(initial_velocity: float, acceleration: float, time: float) -> dict:
    """Velocity of an object after accelerating uniformly for some time.

    Args:
        initial_velocity: starting velocity in m/s
        acceleration: acceleration in m/s^2
        time: duration in seconds
    """
    return record("final_velocity", {"initial_velocity": initial_velocity, "acceleration": acceleration, "time": time})


@capability
def kinetic_energy(mass: float, velocity: float) -> dict:
    """Kinetic energy of a moving body in joules.

    Args:
        mass: mass in kilograms
        velocity: speed in metres per second
    """
    return record("kinetic_energy", {"mass": mass, "velocity": velocity})


@capability
def ohms_law_current(voltage: float, resistance: float) -> dict:
    """Electric current through a resistor (Ohm's law).

    Args:
        voltage: voltage in volts
        resistance: resistance in ohms
    """
    return record("ohms_law_current", {"voltage": voltage, "resistance": resistance})


@capability
def free_fall_time(height: float) -> dict:
    """Time an object takes to fall from a height, ignoring air resistance.

    Args:
        height: drop height in metres
    """
    return record("free_fall_time", {"height": height})


@capability
def density(mass: float, volume: float) -> dict:
    """Density of a material from its mass and volume.

    Args:
        mass: mass in grams
        volume: volume in cubic centimetres
    """
    return record("density", {"mass": mass, "volume": volume})


# ----------------------------------------------------------------------------- units
@capability
def convert_temperature(value: float, from_unit: Literal["celsius", "fahrenheit", "kelvin"],
                        to_unit: Literal["celsius", "fahrenheit", "kelvin"]) -> dict:
    """Convert a temperature between Celsius, Fahrenheit and Kelvin.

    Args:
        value: the temperature to convert
        from_unit: the scale the value is in
        to_unit: the scale wanted
    """
    return record("convert_temperature", {"value": value, "from_unit": from_unit, "to_unit": to_unit})


@capability
def convert_length(value: float, from_unit: Literal["km", "m", "cm", "mile", "foot", "inch"],
                   to_unit: Literal["km", "m", "cm", "mile", "foot", "inch"]) -> dict:
    """Convert a length from one unit to another.

    Args:
        value: the length
        from_unit: unit of the value
        to_unit: unit wanted
    """
    return record("convert_length", {"value": value, "from_unit": from_unit, "to_unit": to_unit})


@capability
def convert_weight(value: float, from_unit: Literal["kg", "g", "lb", "oz", "jin"],
                   to_unit: Literal["kg", "g", "lb", "oz", "jin"]) -> dict:
    """Convert a weight (mass) between kilograms, grams, pounds, ounces and jin (市斤).

    Args:
        value: the weight
        from_unit: unit of the value
        to_unit: unit wanted
    """
    return record("convert_weight", {"value": value, "from_unit": from_unit, "to_unit": to_unit})


@capability
def fuel_efficiency(distance_km: float, fuel_liters: float) -> dict:
    """Fuel consumption in litres per 100 km.

    Args:
        distance_km: distance driven in kilometres
        fuel_liters: fuel used in litres
    """
    return record("fuel_efficiency", {"distance_km": distance_km, "fuel_liters": fuel_liters})


# ----------------------------------------------------------------------------- text
@capability
def count_words(text: str) -> dict:
    """Count the words in a piece of text.

    Args:
        text: the text to count
    """
    return record("count_words", {"text": text})


@capability
def reverse_text(text: str) -> dict:
    """Reverse a string character by character.

    Args:
        text: the string to reverse
    """
    return record("reverse_text", {"text": text})


@capability
def is_palindrome(text: str) -> dict:
    """Check whether a word or phrase reads the same backwards.

    Args:
        text: the word or phrase
    """
    return record("is_palindrome", {"text": text})


@capability
def translate_text(text: str, target_language: str) -> dict:
    """Translate text into another language.

    Args:
        text: the text to translate
        target_language: the language to translate into, such as French
    """
    return record("translate_text", {"text": text, "target_language": target_language})


@capability
def make_slug(title: str, max_length: int = 60) -> dict:
    """Turn a title into a URL slug (lowercase words joined by hyphens).

    Args:
        title: the title
        max_length: the longest slug allowed
    """
    return record("make_slug", {"title": title, "max_length": max_length})


# ----------------------------------------------------------------------------- dates
@capability
def days_between(start_date: str, end_date: str) -> dict:
    """Number of days between two dates.

    Args:
        start_date: the first date, YYYY-MM-DD
        end_date: the second date, YYYY-MM-DD
    """
    return record("days_between", {"start_date": start_date, "end_date": end_date})


@capability
def day_of_week(date: str) -> dict:
    """Which weekday a date falls on.

    Args:
        date: the date, YYYY-MM-DD
    """
    return record("day_of_week", {"date": date})


@capability
def add_days(date: str, days: int) -> dict:
    """The date a number of days after (or before, if negative) a given date.

    Args:
        date: the starting date, YYYY-MM-DD
        days: how many days to add
    """
    return record("add_days", {"date": date, "days": days})


@capability
def age_on(birth_date: str) -> dict:
    """Age in whole years today of someone born on a date.

    Args:
        birth_date: date of birth, YYYY-MM-DD
    """
    return record("age_on", {"birth_date": birth_date})


# ----------------------------------------------------------------------------- travel
@capability
def find_flights(origin: str, destination: str, date: str, passengers: int = 1) -> dict:
    """Search flights between two cities on a date.

    Args:
        origin: city of departure
        destination: city of arrival
        date: day of travel, YYYY-MM-DD
        passengers: number of travellers
    """
    return record("find_flights", {"origin": origin, "destination": destination, "date": date,
                                   "passengers": passengers})


@capability
def book_hotel(city: str, check_in: str, nights: int, guests: int = 1) -> dict:
    """Book a hotel room.

    Args:
        city: the city to stay in
        check_in: arrival date, YYYY-MM-DD
        nights: number of nights
        guests: number of guests
    """
    return record("book_hotel", {"city": city, "check_in": check_in, "nights": nights, "guests": guests})


@capability
def weather_forecast(city: str, days: int = 1) -> dict:
    """Weather forecast for a city.

    Args:
        city: the city
        days: how many days ahead to forecast
    """
    return record("weather_forecast", {"city": city, "days": days})


@capability
def time_in_city(city: str) -> dict:
    """Current local time in a city.

    Args:
        city: the city
    """
    return record("time_in_city", {"city": city})


class TravelMode(Enum):
    DRIVING = "driving"
    WALKING = "walking"
    CYCLING = "cycling"
    TRANSIT = "transit"


@capability
def route_duration(origin: str, destination: str, mode: TravelMode = TravelMode.DRIVING) -> dict:
    """Estimated travel time between two places.

    Args:
        origin: starting place
        destination: where to go
        mode: how to travel
    """
    return record("route_duration", {"origin": origin, "destination": destination, "mode": mode.value})


# ----------------------------------------------------------------------------- cooking
@capability
def scale_recipe(servings_from: int, servings_to: int) -> dict:
    """Factor to scale a recipe's quantities from one number of servings to another.

    Args:
        servings_from: servings the recipe is written for
        servings_to: servings wanted
    """
    return record("scale_recipe", {"servings_from": servings_from, "servings_to": servings_to})


@capability
def convert_cooking_measure(amount: float, from_unit: Literal["cup", "tablespoon", "teaspoon", "ml", "gram"],
                            to_unit: Literal["cup", "tablespoon", "teaspoon", "ml", "gram"],
                            ingredient: Optional[str] = None) -> dict:
    """Convert a kitchen measure (cups, spoons, millilitres, grams).

    Args:
        amount: how much
        from_unit: the measure given
        to_unit: the measure wanted
        ingredient: what is measured, needed for volume to weight (flour, sugar...)
    """
    return record("convert_cooking_measure", {"amount": amount, "from_unit": from_unit, "to_unit": to_unit,
                                              "ingredient": ingredient})


@capability
def roast_time(weight_kg: float, meat: Literal["chicken", "beef", "pork", "lamb", "turkey"]) -> dict:
    """Oven roasting time for a piece of meat.

    Args:
        weight_kg: weight of the meat in kilograms
        meat: the kind of meat
    """
    return record("roast_time", {"weight_kg": weight_kg, "meat": meat})


@capability
def find_recipes(ingredients: list[str], max_minutes: Optional[int] = None) -> dict:
    """Find recipes that use the given ingredients.

    Args:
        ingredients: ingredients to cook with
        max_minutes: the longest total cooking time acceptable
    """
    return record("find_recipes", {"ingredients": ingredients, "max_minutes": max_minutes})


# ----------------------------------------------------------------------------- health
@capability
def bmi(weight_kg: float, height_m: float) -> dict:
    """Body mass index from weight and height.

    Args:
        weight_kg: body weight in kilograms
        height_m: height in metres
    """
    return record("bmi", {"weight_kg": weight_kg, "height_m": height_m})


@capability
def daily_calories(weight_kg: float, height_cm: float, age: int, sex: Literal["male", "female"],
                   activity: Literal["sedentary", "light", "moderate", "active"] = "sedentary") -> dict:
    """Estimated daily calorie need (Mifflin-St Jeor).

    Args:
        weight_kg: weight in kilograms
        height_cm: height in centimetres
        age: age in years
        sex: male or female
        activity: how active the person is
    """
    return record("daily_calories", {"weight_kg": weight_kg, "height_cm": height_cm, "age": age, "sex": sex,
                                     "activity": activity})


@capability
def water_intake(weight_kg: float) -> dict:
    """Recommended daily water intake for a body weight.

    Args:
        weight_kg: body weight in kilograms
    """
    return record("water_intake", {"weight_kg": weight_kg})


@capability
def target_heart_rate(age: int, intensity_percent: float = 70) -> dict:
    """Target heart rate during exercise.

    Args:
        age: age in years
        intensity_percent: share of the maximum heart rate, in percent
    """
    return record("target_heart_rate", {"age": age, "intensity_percent": intensity_percent})


# ----------------------------------------------------------------------------- sports
@capability
def running_pace(distance_km: float, minutes: float) -> dict:
    """Running pace in minutes per kilometre.

    Args:
        distance_km: distance run in kilometres
        minutes: time taken in minutes
    """
    return record("running_pace", {"distance_km": distance_km, "minutes": minutes})


@capability
def batting_average(hits: int, at_bats: int) -> dict:
    """Baseball batting average.

    Args:
        hits: number of hits
        at_bats: number of at-bats
    """
    return record("batting_average", {"hits": hits, "at_bats": at_bats})


@capability
def league_standings(league: str, season: Optional[int] = None) -> dict:
    """Standings table of a sports league.

    Args:
        league: the league, such as Premier League or NBA
        season: the year the season started; the current season when left out
    """
    return record("league_standings", {"league": league, "season": season})


@capability
def match_score(team: str) -> dict:
    """Score of a team's most recent match.

    Args:
        team: the team's name
    """
    return record("match_score", {"team": team})


# ----------------------------------------------------------------------------- mail, calendar, notes (fake back-ends)
@capability
def send_email(to: str, subject: str, body: str) -> dict:
    """Send an e-mail.

    Args:
        to: the recipient's e-mail address
        subject: the subject line
        body: the text of the message
    """
    return record("send_email", {"to": to, "subject": subject, "body": body})


@capability
def create_event(title: str, date: str, time: str, duration_minutes: int = 60) -> dict:
    """Put an event on the calendar.

    Args:
        title: what the event is
        date: the day, YYYY-MM-DD
        time: start time, HH:MM in 24-hour form
        duration_minutes: length of the event in minutes
    """
    return record("create_event", {"title": title, "date": date, "time": time, "duration_minutes": duration_minutes})


@capability
def add_todo(item: str, priority: Literal["low", "normal", "high"] = "normal") -> dict:
    """Add an item to the to-do list.

    Args:
        item: what has to be done
        priority: how urgent it is
    """
    return record("add_todo", {"item": item, "priority": priority})


@capability
def send_sms(phone_number: str, message: str) -> dict:
    """Send a text message to a phone.

    Args:
        phone_number: the phone number to text
        message: what the message says
    """
    return record("send_sms", {"phone_number": phone_number, "message": message})


@capability
def set_timer(minutes: int, label: str = "") -> dict:
    """Start a countdown timer.

    Args:
        minutes: length of the timer in minutes
        label: a name for the timer
    """
    return record("set_timer", {"minutes": minutes, "label": label})


@capability
def order_food(restaurant: str, dish: str, quantity: int = 1) -> dict:
    """Order food for delivery from a restaurant.

    Args:
        restaurant: the restaurant's name
        dish: the dish to order
        quantity: how many portions
    """
    return record("order_food", {"restaurant": restaurant, "dish": dish, "quantity": quantity})


# ----------------------------------------------------------------------------- misc
@capability
def password_strength(password: str) -> dict:
    """Rate how strong a password is.

    Args:
        password: the password to rate
    """
    return record("password_strength", {"password": password})


@capability
def random_number(low: int, high: int) -> dict:
    """Pick a random whole number in a range, both ends included.

    Args:
        low: smallest allowed value
        high: largest allowed value
    """
    return record("random_number", {"low": low, "high": high})


@capability
def grade_average(scores: list[float], weights: Optional[list[float]] = None) -> dict:
    """Average of exam scores, weighted when weights are given.

    Args:
        scores: the scores
        weights: the weight of each score, in the same order
    """
    return record("grade_average", {"scores": scores, "weights": weights})


@capability
def electricity_cost(kwh: float, price_per_kwh: float) -> dict:
    """Cost of the electricity used.

    Args:
        kwh: energy used in kilowatt-hours
        price_per_kwh: price of one kilowatt-hour
    """
    return record("electricity_cost", {"kwh": kwh, "price_per_kwh": price_per_kwh})


@capability
def paint_needed(area_m2: float, coats: int = 2) -> dict:
    """Litres of paint needed to cover a wall area.

    Args:
        area_m2: wall area in square metres
        coats: number of coats
    """
    return record("paint_needed", {"area_m2": area_m2, "coats": coats})
