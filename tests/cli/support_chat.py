"""A long customer-support conversation in the OpenAI Chat Completions format (150 messages).

One customer, several issues over one afternoon: headphones that crackle (an order lookup, a
return authorisation), a delayed second order (shipment tracking, an address change), loyalty
points, pairing and app questions. The last user message asks about details given much
earlier (the RMA number and the return address), so a fit that keeps only the newest turns
loses them. Deterministic: the same list on every call.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["SYSTEM_PROMPT", "as_anthropic", "as_gemini", "as_responses", "support_chat"]

SYSTEM_PROMPT = (
    "You are Nova, the support assistant for Brightline Electronics. Be concise and friendly. "
    "Verify the order number before discussing order details. Never promise refunds outside "
    "the published refund policy; offer escalation to a human agent when the customer asks."
)

# (user message, assistant answer, optional tool call: (name, arguments, result)). A tool
# call sits between the user message and the answer: the assistant calls, the tool answers.
_Exchange = tuple[str, str, tuple[str, dict[str, Any], str] | None]

_EXCHANGES: list[_Exchange] = [
    (
        "Hi, my Soundwave 5 headphones arrived last week and the left earcup crackles.",
        "Sorry to hear that! Can you tell me the order number so I can look it up?",
        None,
    ),
    (
        "It's order 4471.",
        "Thanks. Order 4471: one pair of Soundwave 5 in midnight blue, delivered on 28 May "
        "to 14 Alder Lane, Portland, paid 249 USD. Is that the one?",
        (
            "order_lookup",
            {"order_id": 4471},
            '{"order_id": 4471, "items": [{"sku": "SW5-BLU", "name": "Soundwave 5", '
            '"colour": "midnight blue", "price": 249.0}], "status": "delivered", '
            '"delivered": "2024-05-28", "ship_to": "14 Alder Lane, Portland OR 97211"}',
        ),
    ),
    ("Yes, that's the one.", "Great. Does the crackle happen with every source?", None),
    (
        "It happens on my phone and my laptop, over Bluetooth and with the cable.",
        "Then it is probably not a pairing problem. Which firmware version does the "
        "Brightline app show under Settings > About?",
        None,
    ),
    (
        "The app says firmware 2.3.1.",
        "Version 2.4.0 fixed an audio driver issue on some earcups. Please update: open the "
        "app, tap Device > Firmware > Update, keep the headphones on the charger for about "
        "ten minutes.",
        None,
    ),
    (
        "Updating now, it says 40 percent.",
        "Perfect, let me know once it finishes.",
        None,
    ),
    (
        "Done, it's on 2.4.0 now. Still crackling on the left side though.",
        "Thanks for trying. Let's do a factory reset: hold the power and ANC buttons together "
        "for 15 seconds until the light flashes white, then pair again.",
        None,
    ),
    (
        "Reset done and paired again. The crackle is still there when I move my head.",
        "A crackle that changes when you move points to a loose connection inside the "
        "earcup. That is a hardware fault covered by the warranty.",
        None,
    ),
    (
        "So what are my options?",
        "Within 30 days of delivery you can choose a replacement or a full refund; after that "
        "the two-year warranty covers a repair or replacement. You are on day 9.",
        None,
    ),
    (
        "I'd like a replacement, I like the headphones otherwise.",
        "Understood. I will open a return authorisation for a replacement.",
        None,
    ),
    (
        "Go ahead.",
        "Your return authorisation is RMA-88213. Send the headphones to Brightline Returns, "
        "2200 Harbor Way, Unit 5, Oakland CA 94607 with the prepaid label I just emailed. "
        "The replacement ships as soon as the parcel is scanned by the carrier.",
        (
            "create_rma",
            {"order_id": 4471, "sku": "SW5-BLU", "reason": "left earcup crackle"},
            '{"rma": "RMA-88213", "label": "emailed", "return_to": "Brightline Returns, '
            '2200 Harbor Way, Unit 5, Oakland CA 94607", "replacement": "ships on first scan"}',
        ),
    ),
    (
        "Do I need to include the cable and the case?",
        "Please send only the headphones; keep the cable and the case.",
        None,
    ),
    (
        "And the original box?",
        "Any sturdy box is fine, the original box is not needed.",
        None,
    ),
    ("Ok thanks.", "You're welcome! Anything else I can help with today?", None),
    (
        "Actually yes, I have another order that hasn't arrived, 4502.",
        "Let me check order 4502 for you.",
        None,
    ),
    (
        "It's a wireless charging case.",
        "Order 4502, the Soundwave wireless charging case, left our warehouse on 1 June and "
        "is in transit at the carrier's Memphis hub; the estimated delivery is 7 June.",
        (
            "track_shipment",
            {"order_id": 4502},
            '{"order_id": 4502, "carrier": "UPS", "tracking": "1Z999AA10123456784", '
            '"status": "in transit", "location": "Memphis TN hub", "eta": "2024-06-07"}',
        ),
    ),
    (
        "The original estimate was 3 June, why the delay?",
        "The carrier reported weather delays at the Memphis hub this week; parcels there are "
        "running two to four days late.",
        None,
    ),
    (
        "Can I change the delivery address? I'll be at my office next week.",
        "Yes, while it is in transit I can ask the carrier to redirect it. What is the new "
        "address?",
        None,
    ),
    (
        "Send it to 800 Pine Street, Suite 300, Portland OR 97205.",
        "Done: the carrier accepted the redirect to 800 Pine Street, Suite 300, Portland OR "
        "97205. The estimate stays 7 June.",
        (
            "redirect_shipment",
            {"order_id": 4502, "address": "800 Pine Street, Suite 300, Portland OR 97205"},
            '{"order_id": 4502, "redirect": "accepted", "eta": "2024-06-07"}',
        ),
    ),
    (
        "Will someone need to sign for it?",
        "No signature is required for orders under 300 USD.",
        None,
    ),
    ("Good, the front desk can take it.", "Great, that will work.", None),
    (
        "How many loyalty points do I have?",
        "You have 1,240 points on your Gold tier account; 1,000 points give a 10 USD "
        "voucher at checkout.",
        (
            "loyalty_balance",
            {"customer_id": "C-20931"},
            '{"customer_id": "C-20931", "tier": "Gold", "points": 1240, "expiring": 0}',
        ),
    ),
    (
        "Do the points expire?",
        "Gold tier points never expire while you place an order at least once a year.",
        None,
    ),
    (
        "Can I use them on the replacement?",
        "The replacement is free, so there is nothing to pay with points; keep them for your "
        "next order.",
        None,
    ),
    (
        "Makes sense.",
        "Is there anything else about your orders?",
        None,
    ),
    (
        "One question about pairing: can the headphones connect to two devices at once?",
        "Yes, Soundwave 5 supports multipoint: two devices at once. Enable it in the app "
        "under Connections > Multipoint.",
        None,
    ),
    (
        "I turned it on but the laptop disconnects when the phone plays audio.",
        "With multipoint the headphones switch to the device that starts playing. The laptop "
        "stays paired; it reconnects when the phone stops.",
        None,
    ),
    (
        "Is there a way to prioritise the laptop?",
        "Not yet; a priority setting is planned for firmware 2.5 later this summer.",
        None,
    ),
    ("OK.", "Anything else I can help with?", None),
    (
        "The EQ settings in the app reset every time I reconnect.",
        "That happens when the app saves the preset on the phone only. Tap Save to headphones "
        "under Sound > EQ so the preset is stored on the device.",
        None,
    ),
    (
        "Found it, saved.",
        "The preset will now follow the headphones to every device.",
        None,
    ),
    (
        "What's the battery life supposed to be?",
        "Up to 30 hours of playback with noise cancelling on, 40 hours with it off.",
        None,
    ),
    (
        "Mine lasted about 25 hours with ANC.",
        "That is within the normal range at high volume; battery life also improves slightly "
        "after the first few charge cycles.",
        None,
    ),
    (
        "How long does a full charge take?",
        "About two hours with the USB-C cable; ten minutes give roughly five hours of playback.",
        None,
    ),
    ("Can I use a phone charger?", "Yes, any USB-C charger of 5 V works.", None),
    (
        "Cool. Also, do you do gift wrapping? I want to order a second pair for my sister.",
        "Yes, gift wrapping is 5 USD per item; choose it at checkout. A gift message is free.",
        None,
    ),
    (
        "Can I use my points for the gift order?",
        "Yes: 1,000 of your 1,240 points give 10 USD off that order.",
        None,
    ),
    (
        "Which colours are in stock?",
        "Midnight blue, sand and graphite are in stock; forest green is back next month.",
        (
            "stock_check",
            {"sku": "SW5"},
            '{"SW5-BLU": 42, "SW5-SND": 17, "SW5-GRA": 63, "SW5-GRN": 0}',
        ),
    ),
    ("Sand please, I'll order it on the website.", "Good choice! It ships in one day.", None),
    (
        "Does the gift order ship to a different address than mine?",
        "Yes, you can enter any shipping address at checkout.",
        None,
    ),
    (
        "Will the invoice show the price?",
        "Gift orders never include the price in the parcel; the invoice goes to your email.",
        None,
    ),
    (
        "Perfect. Back to the broken pair: how do I print the return label?",
        "The label is in the email with subject 'Your Brightline return'. Print it at any "
        "size, or show the QR code at a UPS store and they print it.",
        None,
    ),
    (
        "I can't find the email.",
        "I have re-sent it to d.whitfield@example.com just now; please check the spam folder too.",
        (
            "resend_email",
            {"template": "return_label", "to": "d.whitfield@example.com"},
            '{"sent": true}',
        ),
    ),
    ("Got it now.", "Great!", None),
    (
        "Which UPS store is closest to 14 Alder Lane?",
        "The closest is UPS Store #4120 at 5021 NE 42nd Ave, open until 7 pm on weekdays.",
        (
            "store_locator",
            {"carrier": "UPS", "near": "14 Alder Lane, Portland OR 97211"},
            '{"stores": [{"id": 4120, "address": "5021 NE 42nd Ave, Portland", '
            '"open_until": "19:00"}]}',
        ),
    ),
    ("Thanks, I'll drop it off tomorrow.", "Sounds good.", None),
    (
        "How long until you receive it?",
        "UPS Ground from Portland to Oakland usually takes two business days.",
        None,
    ),
    (
        "And the replacement ships as soon as they scan it?",
        "Yes, on the first carrier scan, not when it reaches us.",
        None,
    ),
    (
        "Nice. Is the replacement new or refurbished?",
        "It is a new unit in the same colour, midnight blue.",
        None,
    ),
    (
        "Could I switch the replacement to sand instead?",
        "Yes, I have changed the replacement colour to sand on RMA-88213.",
        (
            "update_rma",
            {"rma": "RMA-88213", "sku": "SW5-SND"},
            '{"rma": "RMA-88213", "replacement_sku": "SW5-SND", "updated": true}',
        ),
    ),
    (
        "Hmm, then my sister and I have the same colour. Let's keep midnight blue.",
        "No problem, switched back to midnight blue.",
        (
            "update_rma",
            {"rma": "RMA-88213", "sku": "SW5-BLU"},
            '{"rma": "RMA-88213", "replacement_sku": "SW5-BLU", "updated": true}',
        ),
    ),
    (
        "Does the warranty restart with the replacement?",
        "The replacement keeps the original two-year warranty from 28 May 2024.",
        None,
    ),
    ("Fair enough.", "Anything else I can help with?", None),
    (
        "Can I track the replacement?",
        "Yes, a tracking link comes by email as soon as it ships.",
        None,
    ),
    (
        "Is it sent express?",
        "Replacements always ship by two-day express at no cost.",
        None,
    ),
    (
        "Is there a phone number in case something goes wrong?",
        "You can call 1-800-555-0199, 8 am to 8 pm Pacific, every day.",
        None,
    ),
    (
        "Will this chat be saved?",
        "Yes, a transcript is emailed to you when we finish.",
        None,
    ),
    (
        "Do you sell replacement ear pads?",
        "Yes, Soundwave 5 ear pads are 19 USD a pair in the accessories section.",
        None,
    ),
    ("Are they easy to change?", "They clip on; no tools needed.", None),
    (
        "OK, I'll think about it.",
        "Sure. Let me know if you need anything else.",
        None,
    ),
    (
        "Last thing: the case from order 4502, is it compatible with my old Soundwave 4?",
        "No, the wireless charging case fits Soundwave 5 only; Soundwave 4 earcups are a "
        "different shape.",
        None,
    ),
    (
        "Too bad.",
        "If you prefer, you can return the unopened case within 30 days for a full refund.",
        None,
    ),
    ("No, I'll keep it for the new pair.", "Good plan!", None),
    (
        "Sorry, my cat walked across the keyboard.",
        "No worries, cats are welcome here.",
        None,
    ),
    (
        "Before I go: what was the return number for the headphones, and where do I send "
        "them? I want to write it on the box.",
        "",
        None,
    ),
]


def support_chat() -> list[dict[str, Any]]:
    """The conversation: the system prompt, then 149 user, assistant and tool messages.

    The last exchange's answer is left out: the history ends with the customer's question.
    """
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM_PROMPT}]
    call = 0
    for user, answer, tool in _EXCHANGES:
        messages.append({"role": "user", "content": user})
        if tool is not None:
            name, arguments, result = tool
            call += 1
            call_id = f"call_{call:03d}"
            messages.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": call_id,
                            "type": "function",
                            "function": {"name": name, "arguments": json.dumps(arguments)},
                        }
                    ],
                }
            )
            messages.append({"role": "tool", "tool_call_id": call_id, "content": result})
        if answer:
            messages.append({"role": "assistant", "content": answer})
    return messages


def _exchanges() -> list[tuple[str, str, tuple[str, dict[str, Any], str, str] | None]]:
    """The exchanges with each tool call's id (``call_001``...), in order."""
    numbered: list[tuple[str, str, tuple[str, dict[str, Any], str, str] | None]] = []
    call = 0
    for user, answer, tool in _EXCHANGES:
        if tool is None:
            numbered.append((user, answer, None))
            continue
        call += 1
        name, arguments, result = tool
        numbered.append((user, answer, (name, arguments, result, f"call_{call:03d}")))
    return numbered


def as_anthropic() -> dict[str, Any]:
    """The conversation as an Anthropic request: ``system`` beside ``messages``, tool calls
    as ``tool_use`` blocks answered by ``tool_result`` blocks in the next user turn."""
    messages: list[dict[str, Any]] = []
    for user, answer, tool in _exchanges():
        messages.append({"role": "user", "content": user})
        if tool is not None:
            name, arguments, result, call_id = tool
            use = {"type": "tool_use", "id": call_id, "name": name, "input": arguments}
            messages.append({"role": "assistant", "content": [use]})
            answered = {"type": "tool_result", "tool_use_id": call_id, "content": result}
            messages.append({"role": "user", "content": [answered]})
        if answer:
            messages.append({"role": "assistant", "content": answer})
    return {"system": SYSTEM_PROMPT, "messages": messages}


def as_responses() -> dict[str, Any]:
    """The conversation as an OpenAI Responses request: ``instructions`` and ``input``."""
    items: list[dict[str, Any]] = []
    for user, answer, tool in _exchanges():
        items.append({"role": "user", "content": user})
        if tool is not None:
            name, arguments, result, call_id = tool
            items.append(
                {
                    "type": "function_call",
                    "call_id": call_id,
                    "name": name,
                    "arguments": json.dumps(arguments),
                }
            )
            items.append({"type": "function_call_output", "call_id": call_id, "output": result})
        if answer:
            items.append({"role": "assistant", "content": answer})
    return {"instructions": SYSTEM_PROMPT, "input": items}


def as_gemini() -> dict[str, Any]:
    """The conversation as a Gemini request: ``system_instruction`` and ``contents``."""
    contents: list[dict[str, Any]] = []
    for user, answer, tool in _exchanges():
        contents.append({"role": "user", "parts": [{"text": user}]})
        if tool is not None:
            name, arguments, result, call_id = tool
            call = {"functionCall": {"id": call_id, "name": name, "args": arguments}}
            contents.append({"role": "model", "parts": [call]})
            response = {"id": call_id, "name": name, "response": json.loads(result)}
            contents.append({"role": "user", "parts": [{"functionResponse": response}]})
        if answer:
            contents.append({"role": "model", "parts": [{"text": answer}]})
    return {"system_instruction": SYSTEM_PROMPT, "contents": contents}
